import Testing

@testable import Countdown

/// The keyed bookkeeping as a value, tested as `LifecycleTests` tests a progress: instants made
/// up, no sleeps, no queues, no threads. Each test drives a table and reads its answers, the
/// effects it decided and the events it appended to the delivery pipeline.
@Suite("CountdownTable")
struct CountdownTableTests {
    typealias Table = EngineState<DeadlineTrack, Int>

    static let origin: UInt64 = 1_000_000_000_000
    /// `ms` after the origin, on both the timer clock and the progress's clock.
    static func at(_ ms: Int) -> Moment {
        let ns = origin + UInt64(ms) * 1_000_000
        return Moment(monotonic: MonotonicInstant(nanoseconds: ns), clock: Int64(ns))
    }

    static func table(capacity: Int? = nil, arming: ArmingStyle = .timerPerCountdown(shutdown: .disarmEach)) -> Table {
        Table(rules: .init(
            tick: .milliseconds(100), maximumDuration: .seconds(60), capacity: capacity, arming: arming))
    }

    /// An observer that writes down what it hears.
    final class Ear: @unchecked Sendable {
        // Written by `deliver` only, which these tests call on their own thread.
        var heard: [CountdownEvent] = []
        lazy var observer: CountdownObserver = { [unowned self] in self.heard.append($0) }
    }

    /// What one call decided: its decision, and the events it put in the delivery pipeline, taken
    /// from there as a drain takes them. Reads as the decision does (`answer`, `effects`).
    @dynamicMemberLookup
    struct Decided<A> {
        let decision: Table.Decision<A>
        let events: ContiguousArray<Delivery>
        /// The ticket of its first event: the count of events decided before the call.
        let ticket: UInt64

        subscript<T>(dynamicMember path: KeyPath<Table.Decision<A>, T>) -> T { decision[keyPath: path] }
    }

    /// Makes `call` on `table`, and takes the events it decided (what earlier calls left in the
    /// pipeline is dropped first, delivered by nobody).
    static func decide<A>(_ table: inout Table, _ call: (inout Table) throws -> Table.Decision<A>) rethrows -> Decided<A> {
        _ = table.pipeline.takePending()
        let ticket = table.pipeline.decided
        let decision = try call(&table)
        return Decided(decision: decision, events: table.pipeline.takePending(), ticket: ticket)
    }

    /// Delivers the events a call decided, as the delivery queue would.
    static func deliver<A>(_ decided: Decided<A>) {
        for delivery in decided.events { delivery.deliver() }
    }

    /// Whether every event a call decided is refused now by its place's gate (its observer
    /// was revoked, or its countdown paused since): none of them would be heard.
    static func refused<A>(_ decided: Decided<A>) -> Bool {
        !decided.events.isEmpty
            && decided.events.allSatisfy { !$0.gate.admits(registration: $0.registration, generation: $0.generation) }
    }

    /// How many observers `decision` let go of (released after the lock).
    static func lettingGo<A>(_ decision: Table.Decision<A>) -> Int {
        decision.effects.count { if case .letGo = $0 { true } else { false } } + (decision.actions.letGo == nil ? 0 : 1)
    }

    static func arms<A>(_ decision: Table.Decision<A>) -> [CountdownID] {
        decision.effects.compactMap { if case .arm(let id, _, _) = $0 { id } else { nil } }
    }

    static func arms<A>(_ decided: Decided<A>) -> [CountdownID] { arms(decided.decision) }

    static func lettingGo<A>(_ decided: Decided<A>) -> Int { lettingGo(decided.decision) }

    @Test("bad input throws and changes nothing")
    func badInput() throws {
        var table = Self.table(capacity: 1)
        _ = try table.start(key: "a", duration: .seconds(1), observer: Ear().observer, now: Self.at(0))
        let changes = table.changes
        let cases: [(String, Duration, CountdownError)] = [
            ("", .seconds(1), .emptyKey),
            ("b", .zero, .nonPositiveDuration(.zero)),
            ("b", .seconds(-1), .nonPositiveDuration(.seconds(-1))),
            ("b", .seconds(61), .durationAboveMaximum(.seconds(61), maximum: .seconds(60))),
            ("b", .seconds(1), .capacityExceeded(capacity: 1)),
        ]
        for (key, duration, expected) in cases {
            #expect(throws: expected) { try table.start(key: key, duration: duration, observer: Ear().observer, now: Self.at(10)) }
            #expect(table.activeKeys == ["a"], "\(expected) left the table as it was")
            #expect(table.changes == changes)
            #expect(table.remaining(key: "b", now: Self.at(10)) == nil)
        }
        _ = table.shutdown()
        #expect(throws: CountdownError.shutDown) { try table.start(key: "c", duration: .seconds(1), observer: Ear().observer, now: Self.at(20)) }
    }

    @Test("a key hashed before the lock with the table's hash is the key: start and cancel find it, also after an emptying")
    func hashComputedBeforeTheLock() throws {
        var table = Self.table()
        let hasher = table.keyHasher
        func hash(_ key: String) -> KeyIndex.Hash { KeyIndex.Hash(key, hasher: hasher) }
        // Canonically equivalent spellings are one key ("é" precomposed, and e + U+0301).
        _ = try table.start(key: "code:caf\u{E9}", hash: hash("code:caf\u{E9}"), duration: .seconds(1), observer: Ear().observer, now: Self.at(0))
        let again = try table.start(key: "code:cafe\u{301}", duration: .seconds(1), observer: Ear().observer, now: Self.at(10))
        #expect(again.answer == .attached(remaining: .milliseconds(990)))
        #expect(table.cancel(key: "code:cafe\u{301}", hash: hash("code:cafe\u{301}")).answer)
        #expect(table.activeKeys.isEmpty)
        _ = table.shutdown()
        #expect(table.keyHasher.seed == hasher.seed, "the seed outlives the keys")
    }

    @Test("start ticks at once and arms; start again attaches, revokes the old observer, arms nothing")
    func startAndAttach() throws {
        var table = Self.table()
        let first = Ear(), second = Ear()
        let started = try Self.decide(&table) { try $0.start(key: "k", duration: .seconds(1), observer: first.observer, now: Self.at(0)) }
        #expect(started.answer == .started)
        #expect(started.persist)
        #expect(Self.arms(started).count == 1)
        Self.deliver(started)
        #expect(first.heard == [.tick("k", .seconds(1))])

        let attached = try Self.decide(&table) { try $0.start(key: "k", duration: .seconds(5), observer: second.observer, now: Self.at(300)) }
        #expect(attached.answer == .attached(remaining: .milliseconds(700)), "not restarted, not extended")
        #expect(!attached.persist, "an attach changes nothing the store keeps")
        #expect(Self.arms(attached).isEmpty)
        #expect(Self.refused(started), "the old observer is revoked")
        #expect(Self.lettingGo(attached) == 1, "and let go of")
        let place = try #require(table.observation(of: "k")).registration.place
        #expect(
            attached.events.count == 1 && table.places[Int(place)].lastTicket == attached.ticket,
            "the place names the attach's tick as the last decided for it")
        Self.deliver(started)
        Self.deliver(attached)
        #expect(second.heard == [.tick("k", .milliseconds(700))])
        #expect(first.heard.count == 1, "the old observer heard nothing more")
    }

    @Test("the finish comes once, never early, with the key already free")
    func finishOnce() throws {
        var table = Self.table()
        let ear = Ear()
        let id = try #require(Self.arms(try table.start(key: "k", duration: .milliseconds(250), observer: ear.observer, now: Self.at(0))).first)
        _ = table.keep(7, for: id)
        var now = 0
        var result = Table.FireResult.continues(nextFire: Self.at(0).monotonic)
        var disarmed: [Int] = []
        while case .continues(let next) = result {
            now = Int((next.nanoseconds - Self.origin) / 1_000_000)
            let fired = Self.decide(&table) { $0.fire(id, now: Self.at(now)) }
            Self.deliver(fired)
            result = fired.answer
            disarmed += fired.effects.compactMap { if case .disarm(let h) = $0 { h } else { nil } }
        }
        #expect(result == .finished)
        #expect(now == 250, "finished at its deadline")
        #expect(disarmed == [7], "its timer disarmed")
        #expect(table.activeCount == 0 && table.remaining(key: "k", now: Self.at(now)) == nil, "the key is free")
        #expect(ear.heard.last == .finished("k"))
        #expect(ear.heard.filter { $0.kind == .finished }.count == 1)
        #expect(table.fire(id, now: Self.at(300)).answer == .stale, "a late fire is stale")
        #expect(try table.start(key: "k", duration: .seconds(1), observer: Ear().observer, now: Self.at(300)).answer == .started)
    }

    @Test("nothing is decided for an observer after a cancel or a replacement")
    func nothingAfterCancel() throws {
        var table = Self.table()
        let ear = Ear()
        let started = try Self.decide(&table) { try $0.start(key: "k", duration: .seconds(1), observer: ear.observer, now: Self.at(0)) }
        let id = try #require(Self.arms(started).first)
        let cancelled = table.cancel(key: "k")
        #expect(cancelled.answer && cancelled.persist)
        #expect(Self.refused(started) && Self.lettingGo(cancelled) == 1, "revoked and let go of")
        #expect(table.cancel(key: "k").answer == false, "a second cancel finds nothing")
        for ms in [100, 1000] {
            let fired = Self.decide(&table) { $0.fire(id, now: Self.at(ms)) }
            #expect(fired.answer == .stale)
            #expect(fired.events.isEmpty, "no event decided for the cancelled countdown")
        }
    }

    @Test("a pause silences the timer's ticks decided before it, still queued, not the start's answer; those after the resume are heard")
    func pauseSilencesQueuedTicks() throws {
        var table = Self.table()
        let ear = Ear()
        let started = try Self.decide(&table) { try $0.start(key: "k", duration: .seconds(1), observer: ear.observer, now: Self.at(0)) }
        let id = try #require(Self.arms(started).first)
        let queued = Self.decide(&table) { $0.fire(id, now: Self.at(100)) }  // decided, not yet delivered
        #expect(queued.events.isEmpty == false)
        #expect(table.pause(key: "k", now: Self.at(150)).answer)
        #expect(Self.refused(queued), "the tick queued before the pause is refused from the pause on")
        #expect(!Self.refused(started), "not the start's answer")
        Self.deliver(started)
        Self.deliver(queued)
        // The start's tick answers the start: heard. The timer's tick came due before the pause
        // and would be heard while paused: dropped.
        #expect(ear.heard == [.tick("k", .seconds(1))], "the start's tick was dropped, or the timer's heard while paused")
        let resumed = table.resume(key: "k", now: Self.at(400))
        let again = try #require(Self.arms(resumed).first)
        let next = Self.decide(&table) { $0.fire(again, now: Self.at(450)) }
        Self.deliver(next)
        // The grid moved by the 250 ms paused: the tick due at 200 comes at 450, with 800 ms left.
        #expect(ear.heard.last == .tick("k", .milliseconds(800)), "the tick after the resume was not heard")
    }

    @Test("pause freezes the remaining time and moves the deadline by the time paused")
    func pauseMovesTheDeadline() throws {
        var table = Self.table()
        let id = try #require(Self.arms(try table.start(key: "k", duration: .seconds(1), observer: Ear().observer, now: Self.at(0))).first)
        #expect(table.pause(key: "k", now: Self.at(250)).answer)
        #expect(table.pause(key: "k", now: Self.at(260)).answer == false, "paused already")
        #expect(table.remaining(key: "k", now: Self.at(400)) == .milliseconds(750))
        #expect(table.fire(id, now: Self.at(300)).answer == .stale, "the timer armed before the pause is stale")
        let resumed = table.resume(key: "k", now: Self.at(600))
        #expect(resumed.answer)
        #expect(table.resume(key: "k", now: Self.at(610)).answer == false, "running already")
        let again = try #require(Self.arms(resumed).first)
        #expect(table.remaining(key: "k", now: Self.at(1000)) == .milliseconds(350))
        var result = Table.FireResult.continues(nextFire: Self.at(0).monotonic), at = 0
        while case .continues(let next) = result {
            at = Int((next.nanoseconds - Self.origin) / 1_000_000)
            result = table.fire(again, now: Self.at(at)).answer
        }
        #expect(at == 1350, "the deadline moved by the 350 ms paused")
        #expect(table.pause(key: "gone", now: Self.at(0)).answer == false)
    }

    @Test("a cancel lets go of an observer with nothing left to deliver without touching its gate, and revokes one with events queued")
    func cancelRetiresWhatIsDelivered() throws {
        var table = Self.table()
        let delivered = Ear(), queued = Ear(), streamed = Ear()
        let first = try Self.decide(&table) { try $0.start(key: "delivered", duration: .seconds(1), observer: delivered.observer, now: Self.at(0)) }
        let second = try Self.decide(&table) { try $0.start(key: "queued", duration: .seconds(1), observer: queued.observer, now: Self.at(0)) }
        #expect(first.events.count == 1 && second.ticket == first.ticket + 1, "an event's ticket is its place in the order of all events")
        // The delivery queue delivered the first start's tick, not the second's.
        let below = first.ticket + 1
        let retired = table.cancel(key: "delivered", deliveredBelow: below)
        #expect(retired.answer && retired.persist)
        #expect(Self.lettingGo(retired) == 1, "let go of")
        #expect(!Self.refused(first), "its gate not touched: nothing of it is queued")
        let revoked = table.cancel(key: "queued", deliveredBelow: below)
        #expect(Self.lettingGo(revoked) == 1)
        #expect(Self.refused(second), "its tick is still queued: revoked")
        Self.deliver(second)
        #expect(queued.heard.isEmpty)
        // A stream is revoked however idle, for its end.
        let third = try Self.decide(&table) { try $0.start(key: "streamed", duration: .seconds(1), observer: Ear().observer, now: Self.at(0)) }
        let attached = Self.decide(&table) { $0.attach(key: "streamed", observer: streamed.observer, ended: {}, now: Self.at(10)) }
        let ended = table.cancel(key: "streamed", deliveredBelow: third.ticket + 100)
        #expect(ended.effects.contains { if case .endStream = $0 { true } else { false } })
        #expect(Self.refused(attached))
        #expect(table.activeCount == 0)
    }

    @Test("a timer of an earlier occupant of a place is stale, and what its arm made is disarmed")
    func staleAfterReuse() throws {
        var table = Self.table()
        let old = try #require(Self.arms(try table.start(key: "a", duration: .seconds(1), observer: Ear().observer, now: Self.at(0))).first)
        _ = table.cancel(key: "a")
        let new = try #require(Self.arms(try table.start(key: "b", duration: .seconds(1), observer: Ear().observer, now: Self.at(10))).first)
        #expect(new.index == old.index, "the place was reused")
        #expect(table.fire(old, now: Self.at(100)).answer == .stale)
        let late = table.keep(1, for: old)
        #expect(late.effects.contains { if case .disarm(1) = $0 { true } else { false } }, "an arm that lost the race is disarmed")
        let kept = table.keep(2, for: new)
        #expect(kept.effects.isEmpty, "the current arm is kept")
        let cancelled = table.cancel(key: "b")
        #expect(cancelled.effects.contains { if case .disarm(2) = $0 { true } else { false } })
    }

    @Test("a handle kept while paused is woken, not disarmed, and one on its way is kept across a pause")
    func workerAcrossPauses() throws {
        var table = Self.table(arming: .worker)
        let id = try #require(Self.arms(try table.start(key: "k", duration: .seconds(1), observer: Ear().observer, now: Self.at(0))).first)
        // Paused and resumed before the worker was kept: no second worker.
        #expect(Self.arms(table.pause(key: "k", now: Self.at(10))).isEmpty)
        #expect(Self.arms(table.resume(key: "k", now: Self.at(20))).isEmpty, "the worker on its way will do")
        let kept = table.keep(5, for: id)
        #expect(kept.effects.contains { if case .wake(5) = $0 { true } else { false } }, "woken to look again")
        let paused = table.pause(key: "k", now: Self.at(30))
        #expect(paused.effects.contains { if case .wake(5) = $0 { true } else { false } })
        #expect(!paused.effects.contains { if case .disarm = $0 { true } else { false } })
        #expect(table.workerStep(id, now: Self.at(40)).answer == .waitForResume)
        _ = table.resume(key: "k", now: Self.at(50))
        #expect(table.workerStep(id, now: Self.at(60)).answer == .sleep(until: Self.at(130).monotonic), "the first tick moved by the 30 ms paused")
    }

    @Test("a shorter last interval is passed on when the handle arrives")
    func shortenWhenKept() throws {
        var table = EngineState<TickCount, Int>(rules: .init(tick: .milliseconds(100), maximumDuration: .seconds(60), capacity: nil))
        let started = try table.start(key: "k", duration: .milliseconds(150), observer: Ear().observer, now: Self.at(0))
        let id = try #require(started.effects.compactMap { if case .arm(let id, _, _) = $0 { id } else { nil } }.first)
        _ = table.fire(id, now: Self.at(100))  // a tick; 50 ms left, a short interval, no handle yet
        let kept = table.keep(3, for: id)
        #expect(kept.effects.contains { if case .shorten(3, let next) = $0 { next == Self.at(150).monotonic } else { false } })
    }

    @Test("shutdown retires every countdown once, then refuses")
    func shutdown() throws {
        var table = Self.table()
        let ears = (0..<3).map { _ in Ear() }
        var started: [Decided<CountdownStart>] = []
        for (n, ear) in ears.enumerated() {
            started.append(try Self.decide(&table) { try $0.start(key: "k\(n)", duration: .seconds(1), observer: ear.observer, now: Self.at(0)) })
            let id = try #require(Self.arms(started[n]).first)
            _ = table.keep(n, for: id)
        }
        let down = table.shutdown()
        #expect(down.answer)
        #expect(Self.lettingGo(down) == ears.count, "every observer let go of")
        #expect(started.allSatisfy { Self.refused($0) }, "every observer revoked")
        #expect(Set(down.effects.compactMap { if case .disarm(let h) = $0 { h } else { nil } }) == [0, 1, 2])
        #expect(down.effects.filter { if case .shutDownMechanism = $0 { true } else { false } }.count == 1)
        #expect(table.activeCount == 0)
        #expect(table.shutdown().answer == false)
        #expect(table.shutdown().effects.isEmpty)
    }

    @Test("each change the store keeps bumps the change count exactly once")
    func changeCount() throws {
        var table = Self.table()
        var last = table.changes
        func bumped(_ expected: UInt64, _ persist: Bool, _ what: String) {
            #expect(table.changes == last + expected, "\(what)")
            #expect(persist == (expected > 0), "\(what) asks for a write only when it changed something")
            last = table.changes
        }
        var d0 = try table.start(key: "k", duration: .seconds(1), observer: Ear().observer, now: Self.at(0))
        bumped(1, d0.persist, "start")
        d0 = try table.start(key: "k", duration: .seconds(1), observer: Ear().observer, now: Self.at(1))
        bumped(0, d0.persist, "attach")
        bumped(1, table.pause(key: "k", now: Self.at(2)).persist, "pause")
        bumped(0, table.pause(key: "k", now: Self.at(3)).persist, "pause again")
        bumped(1, table.resume(key: "k", now: Self.at(4)).persist, "resume")
        bumped(1, table.cancel(key: "k").persist, "cancel")
        bumped(0, table.cancel(key: "k").persist, "cancel of nothing")
        let id = try #require(Self.arms(try table.start(key: "f", duration: .milliseconds(100), observer: Ear().observer, now: Self.at(10))).first)
        last = table.changes
        bumped(1, table.fire(id, now: Self.at(110)).persist, "finish")
    }
}
