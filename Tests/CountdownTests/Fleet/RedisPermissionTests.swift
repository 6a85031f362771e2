#if Redis
import Countdown
import Foundation
import Testing

@testable import CountdownRedis

/// `init` asks Redis, once, whether the user may run every command `redis(zset)` sends, and
/// names every one refused in one error; the article's line grants exactly those.
@Suite("redis(zset): the grants it needs, asked at init", .dedicatedThread, .timeLimit(.minutes(3)))
struct RedisPermissionTests {
    static let namespace = "aon-grants"

    /// The article's line for `redis(zset)` (`line` 0) or what `redis(keyspace)` adds (1), its
    /// namespace this test's, as ACL SETUSER's arguments.
    static func articleLine(_ line: Int = 0) throws -> [String] {
        try RedisDeploymentTests.articleRules()[line].replacingOccurrences(of: "PASSWORD", with: RedisDeploymentTests.password)
            .replacingOccurrences(of: "NAMESPACE", with: namespace).split(separator: " ").map(String.init)
    }

    @Test("three grants missing: one .authentication error at init naming all three")
    func missingNamedAtOnce() throws {
        let server = try RedisAllOrNothingTests.Server()
        defer { server.remove() }
        _ = try server.command(["ACL", "SETUSER", "countdown", "-zadd", "-blmove", "-lrange"])
        let error = #expect(throws: CountdownError.self) {
            _ = try RedisCountdownScheduler(endpoint: server.user, namespace: "aon-grants")
        }
        guard case .unavailable(let reason, let text) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(reason == .authentication)
        for command in ["ZADD", "BLMOVE", "LRANGE"] { #expect(text.contains(command), "\(command) not named: \(text)") }
        #expect(!text.contains(RedisDeploymentTests.password))
    }

    @Test("the article's line for redis(zset) grants nothing it does not use: without any one grant, init refuses, naming it",
          arguments: try articleLine().filter { $0.hasPrefix("+") || $0.hasPrefix("~") })
    func everyGrantIsNeeded(grant: String) throws {
        let server = try RedisAllOrNothingTests.Server()
        defer { server.remove() }
        let line = try Self.articleLine()
        _ = try server.command(["ACL", "SETUSER", "lacking"] + line.filter { $0 != grant })
        _ = try server.command(["ACL", "SETUSER", "whole"] + line)
        let port = try #require(server.server.endpoint.hostAndPort)
        // A key pattern of shards is needed only with shards.
        let shards = grant.hasSuffix(":*") ? 3 : 1
        func scheduler(_ user: String) throws -> RedisCountdownScheduler {
            try RedisCountdownScheduler(
                endpoint: try RedisEndpoint(url: "redis://\(user):\(RedisDeploymentTests.password)@\(port)"),
                namespace: Self.namespace, strategy: .sortedSet(shards: shards))
        }
        try scheduler("whole").shutdown()
        let error = #expect(throws: CountdownError.self) { try scheduler("lacking").shutdown() }
        guard case .unavailable(let reason, let text) = error else { Issue.record("without \(grant): \(String(describing: error))"); return }
        #expect(reason == .authentication, "without \(grant): \(text)")
        if grant.hasPrefix("+") {
            let command = String(grant.dropFirst())
            #expect(text.lowercased().contains(command), "without \(grant), not named: \(text)")
        }
    }

    @Test("the article's second line grants nothing redis(keyspace) does not use: without any one grant, init refuses, naming it, and never as a timeout",
          arguments: try articleLine(1).filter { $0.hasPrefix("+") || $0.hasPrefix("&") })
    func everyKeyspaceGrantIsNeeded(grant: String) throws {
        let server = try RedisAllOrNothingTests.Server()
        defer { server.remove() }
        let whole = try Self.articleLine(0) + Self.articleLine(1)
        _ = try server.command(["ACL", "SETUSER", "lacking"] + whole.filter { $0 != grant })
        _ = try server.command(["ACL", "SETUSER", "whole"] + whole)
        // The expired events on, so that least privilege need not turn them on.
        _ = try server.command(["CONFIG", "SET", "notify-keyspace-events", "Ex"])
        let port = try #require(server.server.endpoint.hostAndPort)
        func scheduler(_ user: String) throws -> RedisCountdownScheduler {
            try RedisCountdownScheduler(
                endpoint: try RedisEndpoint(url: "redis://\(user):\(RedisDeploymentTests.password)@\(port)"),
                namespace: Self.namespace, strategy: .keyspaceNotifications)
        }
        try scheduler("whole").shutdown()
        let error = #expect(throws: CountdownError.self) { try scheduler("lacking").shutdown() }
        guard case .unavailable(let reason, let text) = error else { Issue.record("without \(grant): \(String(describing: error))"); return }
        #expect(reason == .authentication, "without \(grant): \(text)")
        if grant.hasPrefix("+") {
            #expect(text.lowercased().contains(String(grant.dropFirst()).replacingOccurrences(of: "|", with: " ")), "without \(grant), not named: \(text)")
        }
    }
}
#endif
