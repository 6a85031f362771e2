#if Redis
import Countdown
@testable import CountdownRedis
import Testing

/// The fleet's observer registry, without time, threads or Redis: every order in which a
/// call's answer and the messages addressed to its observer can arrive.
@Suite("Observer registry")
struct ObserverRegistryTests {
    static let second: Int64 = 1_000_000_000
    static let tick: Int64 = second

    /// A registry and what it decided, delivered as a drain would deliver it.
    struct Fixture {
        var registry = ObserverRegistry(tick: ObserverRegistryTests.tick)
        var decisions = FleetDecisions()
        var heard: [String: [String]] = [:]

        /// Delivers everything decided so far, gates first, as ``LocalWatch`` does.
        mutating func deliver(_ names: [ObjectIdentifier: String]) {
            for (observer, epoch) in decisions.gates { observer.close(to: epoch) }
            for delivery in decisions.deliveries {
                switch delivery {
                case .tick(let o, let epoch, let event):
                    if o.epoch == epoch { heard[names[ObjectIdentifier(o)]!, default: []].append("tick \(event.remaining.nanoseconds / ObserverRegistryTests.second)") }
                case .told(let o, let event):
                    heard[names[ObjectIdentifier(o)]!, default: []].append("told \(event.remaining.nanoseconds / ObserverRegistryTests.second)")
                case .finish(let o, _):
                    heard[names[ObjectIdentifier(o)]!, default: []].append("finish")
                case .end(let o):
                    heard[names[ObjectIdentifier(o)]!, default: []].append("end")
                }
            }
            decisions = FleetDecisions()
        }
    }

    static func answer(
        _ token: String, generation: Int64 = 7, serial: Int64 = 0, deadline: Int64 = 10 * second, told: Int64 = 10 * second,
        change: Int64 = 0, key: String = "sms-code:+8613812345678", observer: FleetObserver
    ) -> ObserverRegistry.Answer {
        ObserverRegistry.Answer(
            key: key, generation: generation, token: token, attachSerial: serial, duration: 10 * second,
            phase: .running(deadline: deadline), change: change, told: told, observer: observer)
    }

    @Test("a replacement that overtakes the answer is kept: the observer hears its first tick, then nothing, and is let go")
    func replacedBeforeAnswered() {
        var f = Fixture()
        let a = FleetObserver { _ in }
        let expected = f.registry.expect("m/1")
        #expect(expected)
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .replaced), now: 0, into: &f.decisions)
        #expect(f.decisions.deliveries.isEmpty, "a notice for an answer on its way was acted on at once")
        f.registry.observe(Self.answer("m/1", observer: a), now: 0, into: &f.decisions)
        f.deliver([ObjectIdentifier(a): "a"])
        #expect(f.heard["a"] == ["told 10", "end"])
        #expect(f.registry.count == 0, "the replaced observer is still held")
        #expect(f.registry.awaitedCount == 0)
        #expect(a.epoch == .max, "its gate was left open")
    }

    @Test("a cancel that overtakes the answer ends the observer once the answer comes")
    func cancelledBeforeAnswered() {
        var f = Fixture()
        let a = FleetObserver { _ in }
        _ = f.registry.expect("m/1")
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .cancelled), now: 0, into: &f.decisions)
        f.registry.observe(Self.answer("m/1", observer: a), now: 0, into: &f.decisions)
        f.deliver([ObjectIdentifier(a): "a"])
        #expect(f.heard["a"] == ["told 10", "end"])
        #expect(f.registry.count == 0)
    }

    @Test("a pause and a resume that overtake the answer are applied in order: the ticks follow the resumed deadline")
    func pausedAndResumedBeforeAnswered() {
        var f = Fixture()
        let a = FleetObserver { _ in }
        _ = f.registry.expect("m/1")
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .paused(remaining: 9 * Self.second, change: 1)), now: 0, into: &f.decisions)
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .resumed(deadline: 12 * Self.second, change: 2)), now: 0, into: &f.decisions)
        f.registry.observe(Self.answer("m/1", observer: a), now: 0, into: &f.decisions)
        #expect(f.registry.entries[7]?.phase == .running(deadline: 12 * Self.second))
        let filed = f.decisions.ticks.last
        #expect(filed?.instant == 3 * Self.second, "the next tick is not on the resumed countdown's grid: \(String(describing: filed))")
        f.registry.tick(generation: 7, instant: 3 * Self.second, now: 3 * Self.second, into: &f.decisions)
        f.deliver([ObjectIdentifier(a): "a"])
        #expect(f.heard["a"] == ["told 10", "tick 9"])
    }

    @Test("a pause made here, answered before another member's earlier pause and resume are read, stands: they change nothing")
    func staleChangesAfterOwnPause() {
        var f = Fixture()
        let a = FleetObserver { _ in }
        _ = f.registry.expect("m/1")
        f.registry.observe(Self.answer("m/1", observer: a), now: 0, into: &f.decisions)
        // Another member paused (1) and resumed (2); this member's pause (3) is answered first.
        let second = Self.second
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .paused(remaining: 8 * second, change: 3)), now: 2 * second, into: &f.decisions)
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .paused(remaining: 9 * second, change: 1)), now: 2 * second, into: &f.decisions)
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .resumed(deadline: 11 * second, change: 2)), now: 2 * second, into: &f.decisions)
        #expect(f.registry.entries[7]?.phase == .paused(remaining: 8 * second), "a stale notice moved the phase")
        #expect(f.registry.entries[7]?.nextTick == nil, "a tick is filed for a paused countdown")
        f.registry.tick(generation: 7, instant: 3 * second, now: 3 * second, into: &f.decisions)
        f.deliver([ObjectIdentifier(a): "a"])
        #expect(f.heard["a"] == ["told 10"], "the paused observer heard a tick")
    }

    @Test("a finish claimed before the answer is observed is heard after the first tick, once")
    func finishedBeforeAnswered() {
        var f = Fixture()
        let a = FleetObserver { _ in }
        _ = f.registry.expect("m/1")
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .finished), now: 0, into: &f.decisions)
        f.registry.observe(Self.answer("m/1", observer: a), now: 0, into: &f.decisions)
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .finished), now: 0, into: &f.decisions)  // replayed
        f.deliver([ObjectIdentifier(a): "a"])
        #expect(f.heard["a"] == ["told 10", "finish"])
        #expect(f.registry.count == 0)
    }

    @Test("a notice for a token neither on its way nor observed is dropped, and touches no later observer")
    func strayNoticeDropped() {
        var f = Fixture()
        let a = FleetObserver { _ in }
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .cancelled), now: 0, into: &f.decisions)
        _ = f.registry.expect("m/2")
        f.registry.observe(Self.answer("m/2", observer: a), now: 0, into: &f.decisions)
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .replaced), now: 0, into: &f.decisions)
        f.deliver([ObjectIdentifier(a): "a"])
        #expect(f.heard["a"] == ["told 10"])
        #expect(f.registry.count == 1)
    }

    @Test("a call that failed drops what was kept for it")
    func abandonedCall() {
        var f = Fixture()
        _ = f.registry.expect("m/1")
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .paused(remaining: Self.second, change: 1)), now: 0, into: &f.decisions)
        f.registry.abandon("m/1")
        #expect(f.registry.awaitedCount == 0)
        #expect(f.decisions.deliveries.isEmpty && f.decisions.gates.isEmpty)
    }

    @Test("two attaches of this process answered out of order: the earlier one hears its first tick and ends")
    func attachesAnsweredOutOfOrder() {
        var f = Fixture()
        let early = FleetObserver { _ in }, late = FleetObserver { _ in }
        _ = f.registry.expect("m/1")
        _ = f.registry.expect("m/2")
        f.registry.observe(Self.answer("m/2", serial: 2, told: 8 * Self.second, observer: late), now: 0, into: &f.decisions)
        f.registry.observe(Self.answer("m/1", serial: 1, told: 9 * Self.second, observer: early), now: 0, into: &f.decisions)
        f.deliver([ObjectIdentifier(early): "early", ObjectIdentifier(late): "late"])
        #expect(f.heard["early"] == ["told 9", "end"])
        #expect(f.heard["late"] == ["told 8"])
        #expect(f.registry.entries[7]?.token == "m/2")
    }

    /// Seen once in RedisClusterTests' fleet.kill: a member's start and its own attach of the same
    /// countdown, the attach answered first, then another member's cancel ended it; the start's
    /// answer came last and was observed anew, ticked to its deadline and was held for ever.
    @Test("a start answered after this process's later attach was observed and ended (cancelled, finished) ends at once")
    func answerAfterItsReplacementEnded() {
        for ending in [FleetNotice.Kind.cancelled, .finished] {
            var f = Fixture()
            let start = FleetObserver { _ in }, attach = FleetObserver { _ in }
            _ = f.registry.expect("m/1")
            _ = f.registry.expect("m/2")
            f.registry.observe(Self.answer("m/2", serial: 1, told: 9 * Self.second, observer: attach), now: 0, into: &f.decisions)
            f.registry.receive(FleetNotice(generation: 7, token: "m/2", kind: ending), now: 0, into: &f.decisions)
            f.registry.observe(Self.answer("m/1", serial: 0, observer: start), now: 0, into: &f.decisions)
            f.deliver([ObjectIdentifier(start): "start", ObjectIdentifier(attach): "attach"])
            #expect(f.heard["start"] == ["told 10", "end"], "\(ending)")
            #expect(f.registry.count == 0, "\(ending): the start's observer is held, its countdown gone")
        }
        // Once no call is on its way, nothing of the ended countdowns is kept.
        var f = Fixture()
        _ = f.registry.expect("m/3")
        f.registry.observe(Self.answer("m/3", observer: FleetObserver { _ in }), now: 0, into: &f.decisions)
        f.registry.receive(FleetNotice(generation: 7, token: "m/3", kind: .cancelled), now: 0, into: &f.decisions)
        #expect(f.registry.endedCount == 0)
    }

    @Test("a pause silences a tick already decided; the finish still comes after it")
    func pauseClosesTheGate() {
        var f = Fixture()
        let a = FleetObserver { _ in }
        _ = f.registry.expect("m/1")
        f.registry.observe(Self.answer("m/1", observer: a), now: 0, into: &f.decisions)
        f.registry.tick(generation: 7, instant: Self.second, now: Self.second, into: &f.decisions)
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .paused(remaining: 9 * Self.second, change: 1)), now: Self.second, into: &f.decisions)
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .finished), now: Self.second, into: &f.decisions)
        f.deliver([ObjectIdentifier(a): "a"])
        #expect(f.heard["a"] == ["told 10", "finish"])
    }

    @Test("a newer countdown under the key is observed beside an older one, which waits for its own end")
    func olderGenerationWaitsForItsEnd() {
        var f = Fixture()
        let old = FleetObserver { _ in }, new = FleetObserver { _ in }
        _ = f.registry.expect("m/1")
        f.registry.observe(Self.answer("m/1", generation: 7, observer: old), now: 0, into: &f.decisions)
        _ = f.registry.expect("m/2")
        f.registry.observe(Self.answer("m/2", generation: 9, observer: new), now: 0, into: &f.decisions)
        #expect(f.registry.count == 2)
        #expect(f.registry.generation(of: "sms-code:+8613812345678") == 9)
        f.registry.receive(FleetNotice(generation: 7, token: "m/1", kind: .finished), now: 0, into: &f.decisions)
        f.deliver([ObjectIdentifier(old): "old", ObjectIdentifier(new): "new"])
        #expect(f.heard["old"] == ["told 10", "finish"])
        #expect(f.heard["new"] == ["told 10"])
        #expect(f.registry.count == 1)
    }

    @Test("an answer that comes after shutdown ends its observer and observes nothing")
    func answerAfterShutdown() {
        var f = Fixture()
        let a = FleetObserver { _ in }
        _ = f.registry.expect("m/1")
        f.registry.shutdown(into: &f.decisions)
        let observed = f.registry.observe(Self.answer("m/1", observer: a), now: 0, into: &f.decisions)
        let expected = f.registry.expect("m/2")
        #expect(!observed && !expected)
        f.deliver([ObjectIdentifier(a): "a"])
        #expect(f.heard["a"] == ["end"])
        #expect(f.registry.count == 0 && f.registry.awaitedCount == 0)
    }

    @Test("the tick grid: remaining = duration − k·tick, none at or past the deadline")
    func tickGrid() {
        #expect(TickGrid.next(deadline: 10 * Self.second, duration: 10 * Self.second, tick: Self.second, after: 0) == Self.second)
        #expect(TickGrid.next(deadline: 10 * Self.second, duration: 10 * Self.second, tick: Self.second, after: Self.second) == 2 * Self.second)
        #expect(TickGrid.next(deadline: 10 * Self.second, duration: 10 * Self.second, tick: Self.second, after: 9 * Self.second) == nil)
        #expect(TickGrid.next(deadline: .max, duration: 10, tick: .max / 2, after: 0) == nil)
    }

    @Test("a tick is held while its shard's inbox has gone unread past the grace, and the next one filed: other shards tick on")
    func ticksHeldWhileDeaf() {
        var f = Fixture()
        let a = FleetObserver { _ in }, b = FleetObserver { _ in }
        let shardOf: @Sendable (String) -> Int = { $0.hasPrefix("b:") ? 1 : 0 }
        var hearing = InboxHearing(shardOf: shardOf)
        _ = f.registry.expect("m/1")
        f.registry.observe(Self.answer("m/1", key: "a:1", observer: a), now: 0, into: &f.decisions)
        _ = f.registry.expect("m/2")
        f.registry.observe(Self.answer("m/2", generation: 8, key: "b:1", observer: b), now: 0, into: &f.decisions)
        let second = Self.second, grace = InboxHearing.grace
        // Shard 0's reader fails just before the first tick: within the grace, it ticks.
        hearing.lost(shard: 0, since: second - grace)
        #expect(!hearing.holds("a:1", now: second - grace + grace), "held within the grace")
        f.registry.tick(generation: 7, instant: second, now: second, hearing: hearing, into: &f.decisions)
        f.registry.tick(generation: 8, instant: second, now: second, hearing: hearing, into: &f.decisions)
        // Past the grace: shard 0's tick is held, shard 1's is not; a second failure does not move the start.
        hearing.lost(shard: 0, since: 2 * second)
        #expect(hearing.holds("a:1", now: 2 * second) && !hearing.holds("b:1", now: 2 * second))
        f.registry.tick(generation: 7, instant: 2 * second, now: 2 * second, hearing: hearing, into: &f.decisions)
        f.registry.tick(generation: 8, instant: 2 * second, now: 2 * second, hearing: hearing, into: &f.decisions)
        #expect(f.registry.entries[7]?.nextTick == 3 * second, "the held tick's successor was not filed")
        // Read again: it ticks on, with the remaining of its own instant.
        hearing.regained(shard: 0)
        #expect(!hearing.isDeaf)
        f.registry.tick(generation: 7, instant: 3 * second, now: 3 * second, hearing: hearing, into: &f.decisions)
        f.deliver([ObjectIdentifier(a): "a", ObjectIdentifier(b): "b"])
        #expect(f.heard["a"] == ["told 10", "tick 9", "tick 7"])
        #expect(f.heard["b"] == ["told 10", "tick 9", "tick 8"])
    }
}
#endif
