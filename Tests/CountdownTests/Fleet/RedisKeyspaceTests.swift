#if Redis
import Countdown
import CountdownRedis
import Foundation
import Testing

/// `redis(keyspace)`'s timing, which Redis keeps as a TTL in whole milliseconds.
@Suite("redis(keyspace)", .dedicatedThread, .timeLimit(.minutes(1)))
struct RedisKeyspaceTests {
    /// A TTL rounded up to the millisecond put the resumed deadline up to a millisecond later
    /// than the frozen remaining time said: `pause-resume` failed now and then ("resumed with
    /// 1.819931598 seconds, more than the 1.819344 seconds frozen"). The deadline is kept in µs
    /// beside the TTL, and the TTL set to the millisecond at or after it.
    @Test("a resume never gives back more than the pause froze, and the remaining time never grows")
    func resumeGivesBackNoMore() throws {
        let server = try TestRedis.server()
        let s = try RedisCountdownScheduler(
            endpoint: server.endpoint, namespace: TestRedis.namespace(), strategy: .keyspaceNotifications, tickInterval: .seconds(10))
        defer { s.shutdown() }
        var grew: [String] = []
        for round in 0..<40 {
            let key = "sms-code:+86138\(String(format: "%08d", round))"
            try s.start(key: key, duration: .seconds(5), observer: { _ in })
            let started = try #require(s.remaining(key: key))
            #expect(started <= .seconds(5), "round \(round): \(started) left of a 5 s countdown just started")
            usleep(UInt32.random(in: 0...1_500))
            #expect(s.pause(key: key))
            let frozen = try #require(s.remaining(key: key))
            #expect(s.resume(key: key))
            let resumed = try #require(s.remaining(key: key))
            if resumed > frozen { grew.append("round \(round): \(frozen) frozen, \(resumed) after the resume") }
            #expect(s.cancel(key: key))
        }
        #expect(grew.isEmpty, "\(grew.count) of 40 resumes gave back more than was frozen: \(grew.prefix(3))")
    }
}
#endif
