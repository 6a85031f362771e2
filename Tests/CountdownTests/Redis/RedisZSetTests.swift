#if Redis
import Countdown
@testable import CountdownRedis
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

    /// A call the server ran but closed the connection on before answering is sent again:
    /// the start script answers it as it answered the first, and starts nothing twice.
    @Test("a start sent twice with one observer token answers the same, started once")
    func startSentAgainAnswersTheSame() throws {
        let link = try RedisLink(try TestRedis.server().endpoint)
        let prefix = "{\(TestRedis.namespace())}"
        let arguments = ["member", "member/1", "rate-limit:user:0000123456", "60000000", "-1", "0"]
        let first = try link.run(ZSetScripts.start, keys: [prefix], arguments: arguments).elements
        let again = try link.run(ZSetScripts.start, keys: [prefix], arguments: arguments).elements
        #expect(first.first?.int == 0 && again.first?.int == 0, "answers \(first) then \(again), not started twice")
        #expect(first[1].int == again[1].int, "a second generation: the countdown was started twice")
        let other = try link.run(ZSetScripts.start, keys: [prefix], arguments: ["member", "member/2"] + arguments.dropFirst(2)).elements
        #expect(other.first?.int == 1 && other.last?.int == 1, "another observer's start did not attach as the first attach: \(other)")
        #expect(try link.call(["ZCARD", "\(prefix):d"]).int == 1)
    }
}
#endif
