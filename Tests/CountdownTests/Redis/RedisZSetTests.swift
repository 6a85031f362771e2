#if Redis
import Countdown
import CountdownRedis
@testable import CountdownConformance
import Dispatch
import Foundation
import Testing

@Suite("redis(zset)", .timeLimit(.minutes(2)))
struct RedisZSetTests {
    @Test("a countdown ticks and finishes once, through a real redis-server")
    func ticksAndFinishes() throws {
        let server = try TestRedis.server()
        let s = try RedisCountdownScheduler(endpoint: server.endpoint, namespace: TestRedis.namespace(), tickInterval: .milliseconds(50))
        defer { s.shutdown() }
        let log = recorder()
        #expect(try s.start(key: "sms-code:+8613812345678", duration: .milliseconds(220), observer: log.observer) == .started)
        #expect(log.waitForFinish())
        let events = log.all
        expectWellFormed(events, "zset")
        #expect(events.first?.event.remaining == .milliseconds(220))
        #expect(events.filter { $0.event.kind == .tick }.count >= 3)
        #expect(s.remaining(key: "sms-code:+8613812345678") == nil)
    }
}
#endif
