// The article's request-handler example ("A fleet on Redis", "Called from a server"), compiled
// and run against the test process's own redis-server (with the Redis trait).
#if Redis
// README server example begins
import Countdown
import CountdownRedis

/// In a request handler, a task on Swift's cooperative pool: nil lets the request through and
/// opens the user's window; else how long until it ends. The task suspends while Redis answers.
func retryAfterAsync(userID: Int, windows: RedisCountdownScheduler) async throws -> Duration? {
    switch try await windows.async.start(key: "rate-limit:user:\(userID)", duration: .seconds(60), observer: { _ in }) {
    case .started: return nil
    case .attached(let remaining): return remaining
    }
}
// README server example ends

import Testing

@Test func rateLimitOnRedisFromManyRequestsAtOnce() async throws {
    let endpoint = try TestRedis.server().endpoint
    let namespace = TestRedis.namespace()
    let first = try RedisCountdownScheduler(endpoint: endpoint, namespace: namespace)
    let second = try RedisCountdownScheduler(endpoint: endpoint, namespace: namespace)
    defer { first.shutdown(); second.shutdown() }
    // 64 requests of one user at once, half on each server: one goes through.
    let answers = try await withThrowingTaskGroup(of: Duration?.self) { group in
        for request in 0..<64 { group.addTask { try await retryAfterAsync(userID: 123_456, windows: request % 2 == 0 ? first : second) } }
        return try await group.reduce(into: [Duration?]()) { $0.append($1) }
    }
    #expect(answers.filter { $0 == nil }.count == 1)
    #expect(answers.compactMap { $0 }.allSatisfy { $0 > .seconds(59) && $0 <= .seconds(60) })
}
#endif
