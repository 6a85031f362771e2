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
}
