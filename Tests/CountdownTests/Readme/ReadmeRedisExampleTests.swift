// The README's rate-limit example on a fleet ("A fleet of servers: Redis"), compiled and run
// against the test process's own redis-server (with the Redis trait; without it, only its
// text is compared with the README's).
#if Redis
// README redis example begins
import Countdown
import CountdownRedis

/// Nil: the request opens the user's window, on whichever server it reached. Else how long
/// until the window ends: the user was here less than a minute ago, on this server or another.
func retryAfter(userID: Int, windows: RedisCountdownScheduler) throws -> Duration? {
    switch try windows.start(key: "rate-limit:user:\(userID)", duration: .seconds(60), observer: { _ in }) {
    case .started: return nil
    case .attached(let remaining): return remaining
    }
}
// README redis example ends

import Testing

@Test func rateLimitWindowOnRedisSharedByTwoServers() throws {
    let endpoint = try TestRedis.server().endpoint
    let namespace = TestRedis.namespace()
    let first = try RedisCountdownScheduler(endpoint: endpoint, namespace: namespace)
    let second = try RedisCountdownScheduler(endpoint: endpoint, namespace: namespace)
    defer { first.shutdown(); second.shutdown() }
    #expect(try retryAfter(userID: 123_456, windows: first) == nil)
    let remaining = try #require(try retryAfter(userID: 123_456, windows: second))
    #expect(remaining > .seconds(59) && remaining <= .seconds(60))
}
#endif
