#if Redis
import Countdown
import CountdownSupport
@testable import CountdownRedis
@testable import CountdownConformance
import Foundation
import Testing

/// A countdown gone from Redis (a start a failover lost, an eviction, a `DEL` by hand) no claim
/// will ever take: its observer hears the finish once the member has asked Redis, past the
/// deadline, and found neither the countdown nor a word of its end; never before the deadline.
@Suite("redis(zset): a countdown Redis lost", .dedicatedThread, .timeLimit(.minutes(2)))
struct RedisLostCountdownTests {
    @Test("a countdown deleted by hand: its observer hears the finish, not before its deadline, and it is counted")
    func deletedByHand() throws {
        let server = try TestRedis.server()
        let namespace = TestRedis.namespace()
        let s = try RedisCountdownScheduler(endpoint: server.endpoint, namespace: namespace, tickInterval: .milliseconds(100))
        defer { s.shutdown() }
        let key = "sms-code:+8613800000001"
        let kept = "sms-code:+8613800000002"
        let log = recorder(), other = recorder()
        let before = SystemClocks.monotonic()
        #expect(try s.start(key: key, duration: .milliseconds(300), observer: log.observer) == .started)
        #expect(try s.start(key: kept, duration: .milliseconds(400), observer: other.observer) == .started)
        let admin = try RedisConnection(server.endpoint)
        #expect(try admin.call(["DEL", "{\(namespace)}:c:\(key)"]) == .integer(1))
        _ = try admin.call(["ZREM", "{\(namespace)}:d", key])
        // Judged by what was heard: no claim can take it; only the member's question can end it.
        #expect(log.waitForFinish(timeout: .seconds(10)), "the observer of a countdown gone from Redis never heard its finish")
        let finish = try #require(log.all.last { $0.event.kind == .finished })
        #expect(finish.at >= before + 300_000_000, "the finish of a lost countdown came before its deadline")
        #expect(log.all.filter { $0.event.kind == .finished }.count == 1)
        #expect(other.waitForFinish(timeout: .seconds(10)), "the countdown left in Redis was not claimed")
        #expect(s.lostCountdowns == 1, "counted \(s.lostCountdowns) lost, one was")
        #expect(s.remaining(key: key) == nil && s.activeCount == 0)
    }
}
#endif
