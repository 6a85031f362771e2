#if Redis
@testable import Countdown
@testable import CountdownConformance
@testable import CountdownRedis
import CountdownSupport
import Foundation
import Testing

/// A member hears that another member's call ended its observer only from its inbox. While its
/// inbox reader cannot read, it holds its observers' ticks after ``InboxHearing/grace``: in
/// CI, a reader that met several dropped answers in a row on a loaded machine let replaced
/// observers tick 160-200 ms after the call that replaced them (the fleet's bound is 100 ms).
/// Here the reader of one member (A, through the suite's proxy) cannot read for as long as the
/// test says; the other (B) is connected directly.
@Suite(.dedicatedThread, .timeLimit(.minutes(2)))
struct RedisDeafMemberTests {
    struct Fleet {
        let server: LocalRedisServer
        let proxy: FaultProxy
        let a: RedisCountdownScheduler
        let b: RedisCountdownScheduler

        init() throws {
            server = try LocalRedisServer()
            proxy = try FaultProxy(upstream: try #require(server.endpoint.hostAndPort))
            let namespace = TestRedis.namespace()
            a = try RedisCountdownScheduler(
                endpoint: server.endpoint.at(.tcp(host: "127.0.0.1", port: proxy.port)), namespace: namespace,
                tickInterval: .milliseconds(20))
            b = try RedisCountdownScheduler(endpoint: server.endpoint, namespace: namespace, tickInterval: .milliseconds(20))
        }

        /// Every answer to A's inbox reader dropped: only its requests name a processing list
        /// (`P:w:<member>`), as its blocking move, its reread and its move script do.
        func deafen() { proxy.inject(.dropAnswers(probability: 1, toRequestsContaining: ":w:")) }

        /// Whether both members' inbox readers wait in their blocking move, as the server sees
        /// them: past their first reading, which, on a loaded machine, could otherwise still be
        /// on its way when the test deafens A (then A was deaf from its start, and held its
        /// observer's ticks before the test had seen any: 3 runs of 8 beside `stress-ng --cpu 6`).
        func readersWait() throws -> Bool {
            let admin = try RedisConnection(server.endpoint)
            let deadline = SystemClocks.monotonic() + 10_000_000_000
            while SystemClocks.monotonic() < deadline {
                let clients = try admin.call(["CLIENT", "LIST"]).text ?? ""
                let waiting = clients.split(whereSeparator: \.isNewline).filter { $0.contains("cmd=blmove") && $0.contains("flags=b") }
                if waiting.count >= 2 { return true }
                usleep(10_000)
            }
            return false
        }

        func stop() {
            a.shutdown()
            b.shutdown()
            proxy.stop()
            server.remove()
        }
    }

    static let key = "rate-limit:user:0000424242"

    /// B cancels A's countdown while A cannot read: A never hears of it until it reads again,
    /// and its observer hears no tick that begins more than 100 ms after the cancel returned
    /// (before: it ticked on until its deadline, 3 s later).
    @Test("a member that cannot read its inbox holds its ticks: a countdown cancelled elsewhere is not heard ticking")
    func cancelledWhileDeaf() throws {
        let fleet = try Fleet()
        defer { fleet.stop() }
        let log = recorder()
        #expect(try fleet.readersWait(), "the members' inbox readers never waited in their blocking move")
        #expect(try fleet.a.start(key: Self.key, duration: .seconds(3), observer: log.observer) == .started)
        fleet.deafen()
        // The reader's blocking move sent before deafen() answers as usual; the next is dropped
        // when the cancel's notice wakes it (its one-second wait ends first, at worst).
        #expect(log.wait(timeout: .seconds(5)) { $0.count >= 5 }, "A's observer did not tick")
        usleep(1_100_000)
        #expect(try fleet.b.cancel(key: Self.key), "B's cancel found nothing")
        let cancelled = SystemClocks.monotonic()
        usleep(600_000)
        #expect(fleet.proxy.faults > 0, "the proxy dropped no answer: A's reader was never deaf")
        let late = log.ticks.filter { $0.at > cancelled + 100_000_000 }
        #expect(late.isEmpty, "A's observer heard \(late.count) ticks more than 100 ms after B's cancel returned (the first \((late.first?.at ?? cancelled) - cancelled) ns after)")
        // Heard again, A learns of the cancel: nothing more, not a finish.
        fleet.proxy.inject(nil)
        usleep(3_000_000)
        #expect(log.finishes.isEmpty, "A's cancelled observer heard a finish")
        #expect(log.ticks.filter { $0.at > cancelled + 100_000_000 }.isEmpty, "A's observer ticked again after it read its inbox")
    }

    /// Holding is not ending: an observer still current ticks again once its member reads its
    /// inbox, and hears its finish once, on time.
    @Test("a member that reads its inbox again ticks its observers again, and hears their finish")
    func ticksAgainWhenHeard() throws {
        let fleet = try Fleet()
        defer { fleet.stop() }
        let log = recorder()
        fleet.deafen()
        // The move sent before the fault answers when its second ends; the next one is dropped.
        let deadline = SystemClocks.monotonic() + 5_000_000_000
        while fleet.proxy.faults == 0, SystemClocks.monotonic() < deadline { usleep(20_000) }
        #expect(fleet.proxy.faults > 0, "the proxy dropped no answer: A's reader was never deaf")
        let began = SystemClocks.monotonic()
        #expect(try fleet.a.start(key: Self.key, duration: .milliseconds(1_500), observer: log.observer) == .started)
        usleep(700_000)
        let heldFrom = began + 200_000_000
        let heldUntil = SystemClocks.monotonic()
        fleet.proxy.inject(nil)
        #expect(log.waitForFinish(timeout: .seconds(5)), "A's observer never heard its finish")
        usleep(200_000)
        let ticks = log.ticks.map(\.at)
        #expect(ticks.filter { $0 > heldFrom && $0 < heldUntil }.isEmpty, "A ticked while it could not read: \(ticks.count) ticks")
        #expect(ticks.contains { $0 > heldUntil }, "A's observer did not tick again once A read its inbox")
        #expect(log.finishes.count == 1, "\(log.finishes.count) finishes")
        #expect((log.finishes.first?.at ?? 0) + 1_000_000 >= began + 1_500_000_000, "the finish came before the deadline")
    }
}
#endif
