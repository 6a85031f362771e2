#if Redis
import Countdown
import CountdownSupport

/// A plain connection for what tests and the benchmark do to a Redis server beside the
/// schedulers: a round trip's time, its memory, filling it with idle keys, dropping clients.
/// Not for countdowns: ``RedisCountdownScheduler`` is.
package final class RedisAdmin: Sendable {
    private let link: RedisLink

    /// Connects to the server at `endpoint`; throws `CountdownError.unavailable` when it cannot.
    package convenience init(_ endpoint: RedisEndpoint) throws(CountdownError) {
        try self.init(endpoint, route: nil)
    }

    /// On a cluster whose endpoint is away, to `route`'s node.
    init(_ endpoint: RedisEndpoint, route: ClusterRoute?) throws(CountdownError) {
        do {
            link = try RedisLink(endpoint, client: "admin", route: route)
        } catch {
            throw error.countdownError
        }
    }

    /// Throws `.unavailable(.authentication, …)` naming every command of `probe` the user may
    /// not run under `prefix`.
    func check(_ probe: PermissionProbe, prefix: String, strategy: String) throws(CountdownError) {
        try probe.check(link, prefix: prefix, strategy: strategy)
    }

    /// One `PING`, answered `PONG`.
    package func ping() throws(CountdownError) {
        guard try call(["PING"]) == .status("PONG") else { throw .unavailable(.protocol, "PING was not answered PONG") }
    }

    /// `INFO memory`'s `maxmemory_policy`: what the server drops when it is full.
    package func maxmemoryPolicy() throws(CountdownError) -> String { try memoryField("maxmemory_policy") }

    /// `INFO memory`'s `used_memory`, in bytes.
    package func usedMemory() throws(CountdownError) -> Int {
        guard let bytes = Int(try memoryField("used_memory")) else { throw .unavailable(.protocol, "used_memory in INFO memory is not a number") }
        return bytes
    }

    /// The value of `name` in `INFO memory`.
    private func memoryField(_ name: String) throws(CountdownError) -> String {
        let info = try call(["INFO", "memory"]).text ?? ""
        guard let line = info.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("\(name):") }) else {
            throw .unavailable(.protocol, "no \(name) in INFO memory")
        }
        return String(line.dropFirst(name.count + 1))
    }

    /// How many times the server ran `command` (lower case: `evalsha`) and the microseconds it
    /// spent in it, from `INFO commandstats`: a script's time is what every member's calls
    /// queue behind, since Redis runs one at a time.
    package func commandStats(_ command: String) throws(CountdownError) -> (calls: Int, microseconds: Int) {
        let info = try call(["INFO", "commandstats"]).text ?? ""
        guard let line = info.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_\(command):") }) else {
            return (0, 0)
        }
        var calls = 0, microseconds = 0
        for field in line.dropFirst("cmdstat_\(command):".count).split(separator: ",") {
            let pair = field.split(separator: "=")
            guard pair.count == 2, let value = Int(pair[1]) else { continue }
            if pair[0] == "calls" { calls = value }
            if pair[0] == "usec" { microseconds = value }
        }
        return (calls, microseconds)
    }

    /// The server's version, from `INFO server`.
    package func version() throws(CountdownError) -> String {
        let info = try call(["INFO", "server"]).text ?? ""
        let line = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("redis_version:") }
        return line.map { String($0.dropFirst("redis_version:".count)) } ?? "unknown"
    }

    /// Writes `count` keys (`prefix`, then a number) with a TTL of `ttl`, pipelined: the idle keys a Redis
    /// that also holds sessions or caches carries.
    package func writeIdleKeys(_ count: Int, prefix: String, ttl: Duration) throws(CountdownError) {
        let milliseconds = String(ttl.components.seconds * 1000)
        var next = 0
        while next < count {
            let end = min(count, next + 10_000)
            let commands = (next..<end).map { ["SET", "\(prefix)\($0)", "x", "PX", milliseconds] }
            do {
                _ = try link.pipeline(commands)
            } catch {
                throw error.countdownError
            }
            next = end
        }
    }

    /// `SET key value`, `times` times: ballast, written to push a stopped replica past what its
    /// master and the kernel buffer for it (the benchmark's own servers only).
    package func writeBallast(_ key: String, value: String, times: Int) throws(CountdownError) {
        for _ in 0..<times { _ = try call(["SET", key, value]) }
    }

    /// Empties every database.
    package func flushAll() throws(CountdownError) { _ = try call(["FLUSHALL"]) }

    /// Closes every client connection of `type` (`normal`, `pubsub`) but this one, as
    /// `CLIENT KILL TYPE … SKIPME yes` does; how many were closed.
    @discardableResult
    package func killClients(type: String) throws(CountdownError) -> Int {
        Int(try call(["CLIENT", "KILL", "TYPE", type, "SKIPME", "yes"]).int ?? 0)
    }

    /// `CONFIG SET name value`: a test changing the server under the schedulers (its password).
    package func configSet(_ name: String, _ value: String) throws(CountdownError) {
        _ = try call(["CONFIG", "SET", name, value])
    }

    /// The number of keys in the current database.
    package func keyCount() throws(CountdownError) -> Int { Int(try call(["DBSIZE"]).int ?? 0) }

    /// Deletes every key `SCAN MATCH pattern` finds on this node, each page as it comes, one
    /// `DEL` per slot (a cluster refuses keys of several slots in one command); how many.
    package func deleteKeys(matching pattern: String) throws(CountdownError) -> Int {
        var deleted = 0
        try scan(pattern) { (keys: [String]) throws(CountdownError) in
            for keys in Dictionary(grouping: keys, by: ClusterSlot.of).values {
                deleted += Int(try call(["DEL"] + keys).int ?? 0)
            }
        }
        return deleted
    }

    /// Every key `SCAN MATCH pattern` finds on this node.
    func keys(matching pattern: String) throws(CountdownError) -> [String] {
        var found: [String] = []
        try scan(pattern) { found += $0 }
        return found
    }

    /// One `SCAN` walk, each page's keys handed to `page` as it comes.
    private func scan(_ pattern: String, _ page: ([String]) throws(CountdownError) -> Void) throws(CountdownError) {
        var cursor = "0"
        repeat {
            let reply = try call(["SCAN", cursor, "MATCH", pattern, "COUNT", "1000"]).elements
            guard reply.count == 2, let next = reply[0].text else {
                throw .unavailable(.protocol, "SCAN answered neither a cursor nor a page of keys")
            }
            cursor = next
            try page(reply[1].elements.compactMap(\.text))
        } while cursor != "0"
    }

    /// Any command; a refusal is thrown as `CountdownError`, named after the command.
    func command(_ arguments: [String]) throws(CountdownError) -> RedisReply { try call(arguments) }

    private func call(_ arguments: [String]) throws(CountdownError) -> RedisReply {
        let reply: RedisReply
        do {
            reply = try link.call(arguments)
        } catch {
            throw error.countdownError
        }
        if case .error(let text) = reply {
            // The reason is read from the server's own words (NOPERM, OOM…); the command is named after.
            guard case .unavailable(let reason, let said) = RedisFailure.server(text).countdownError else { throw .unavailable(.server, text) }
            throw .unavailable(reason, "\(arguments.first ?? ""): \(said)")
        }
        return reply
    }
}
#endif
