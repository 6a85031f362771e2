#if Redis
import Countdown
import CountdownRedis
import CountdownSupport
import Foundation

/// The Redis server an experiment measures: one of the benchmark's own (its CPU read from
/// `/proc`, and it can be crashed and restarted), or the one `--redis` names.
final class RedisUnderTest: Sendable {
    let endpoint: RedisEndpoint
    private let own: Locked<LocalRedisServer?>
    private let admin: RedisAdmin

    /// A fresh server of our own (with `settings`), or the named one.
    init(named: RedisEndpoint?, settings: [String] = []) throws {
        if let named {
            own = Locked(nil)
            endpoint = named
        } else {
            let server = try LocalRedisServer(extraSettings: settings)
            own = Locked(server)
            endpoint = server.endpoint
        }
        admin = try RedisAdmin(endpoint)
    }

    deinit { own.withLock { $0?.remove() } }

    var isOwn: Bool { own.withLock { $0 != nil } }

    func usedMemory() throws -> Int { try admin.usedMemory() }
    func scriptStats() throws -> (calls: Int, microseconds: Int) { try admin.commandStats("evalsha") }
    func version() -> String { (try? admin.version()) ?? "unknown" }
    func connection() throws -> RedisAdmin { try RedisAdmin(endpoint) }

    /// `idleKeys` keys with a one-hour TTL, in a namespace of their own.
    func fill(idleKeys: Int) throws {
        guard idleKeys > 0 else { return }
        try admin.writeIdleKeys(idleKeys, prefix: "{\(RedisTarget.namespace("fleet-idle-\(UInt32.random(in: 0...UInt32.max))"))}:", ttl: .seconds(3600))
    }

    /// Our server killed with SIGKILL, as a crash would, and started again on the same port
    /// and directory: what its append-only file holds comes back.
    func crashAndRestart() {
        own.withLock { server in
            guard let current = server else { return }
            current.kill()
            server = try? current.restarted()
        }
    }

    /// Our server's CPU time (user + system) so far, from `/proc/<pid>/stat`; nil for a named one.
    func cpuNanoseconds() -> UInt64? { own.withLock { $0?.cpuNanoseconds } }
}
#endif
