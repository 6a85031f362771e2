#if Redis
@testable import CountdownRedis
import Foundation
import Testing

/// The tests' own servers: a server is ours only when our process says it is ready. A port
/// chosen free can be taken before ours binds it; a PING would then be answered by the other
/// server, and a test would run against someone else's (seen in CI: WRONGPASS from another
/// test's server, whose users were not ours).
@Suite("Local redis-server")
struct LocalRedisServerTests {
    @Test("a server whose port is already taken is not started, saying why; the other server is left as it was")
    func portTaken() throws {
        let holder = try LocalRedisServer()
        defer { holder.remove() }
        let port = try #require(holder.endpoint.hostAndPort.flatMap { $0.split(separator: ":").last }.flatMap { Int($0) })
        let connection = try RedisConnection(holder.endpoint)
        _ = try connection.call(["SET", "left-as-it-was", "yes"])

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countdown-taken-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let error = #expect(throws: LocalRedisServer.StartError.self) {
            let server = try LocalRedisServer(directory: directory, port: port, extraSettings: [])
            server.remove()
        }
        #expect(error?.description.contains("Address already in use") == true, "says why: \(String(describing: error))")
        #expect(holder.isRunning)
        #expect(try RedisConnection(holder.endpoint).call(["GET", "left-as-it-was"]).text == "yes")
    }
}
#endif
