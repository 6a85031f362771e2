import CountdownSupport
import Testing

@testable import Countdown

/// A start allocates no observer slot when its place kept one nothing else holds: the table's
/// decisions about the slot a place keeps, with made-up instants and the deliveries run by
/// hand, as the delivery queue would run them.
@Suite("A place's observer slot, reused")
struct ObserverSlotReuseTests {
    typealias Table = CountdownTableTests.Table

    /// What an observer captures: gone once the observer is let go of.
    final class Token: Sendable {}

    /// Starts `key` with an observer closure, as the engine does (no slot made by the caller).
    static func start(_ table: inout Table, _ key: String, ms: Int, _ observer: @escaping CountdownObserver) throws
        -> Table.Actions
    {
        var actions = Table.Actions()
        let answer = try table.start(
            key: key, hash: KeyIndex.Hash(key, hasher: table.keyHasher), duration: .milliseconds(250),
            observer: .closure(observer), now: CountdownTableTests.at(ms), &actions)
        #expect(answer == .started)
        return actions
    }

    static func cancel(_ table: inout Table, _ key: String, deliveredBelow: UInt64) -> Table.Actions {
        var actions = Table.Actions()
        #expect(table.cancel(key: key, hash: KeyIndex.Hash(key, hasher: table.keyHasher), deliveredBelow: deliveredBelow, &actions))
        return actions
    }

    static func dropped(_ actions: Table.Actions) -> [ObserverSlot] {
        actions.effects.compactMap { if case .drop(let slot) = $0 { slot } else { nil } }
    }

    static func letGo(_ actions: Table.Actions) -> Int {
        actions.effects.count { if case .letGo = $0 { true } else { false } }
    }

    @Test("a cancel with nothing left to deliver keeps the emptied slot for the next start, and lets the observer go after the lock")
    func cancelKeepsTheSlot() throws {
        var table = CountdownTableTests.table()
        var token: Token? = Token()
        weak let watched = token
        var started = try Self.start(&table, "sms-code:+8613800000001", ms: 0) { [token] _ in _ = token }
        token = nil
        weak let kept = table.observer(of: "sms-code:+8613800000001")
        #expect(kept != nil)
        // Its start's tick delivered, and the delivery let go of.
        started = Table.Actions()
        var cancelled = Self.cancel(&table, "sms-code:+8613800000001", deliveredBelow: .max)
        #expect(cancelled.retired == nil, "kept, not retired")
        #expect(!cancelled.effects.contains { if case .revoke = $0 { true } else { false } })
        #expect(Self.letGo(cancelled) == 1)
        #expect(watched != nil, "the observer goes after the lock, with the effect")
        cancelled = Table.Actions()
        #expect(watched == nil, "let go of with the effect")
        #expect(kept != nil, "the slot stays in the place")

        let heard = Locked<[CountdownEvent.Kind]>([])
        let restarted = try Self.start(&table, "rate-limit:user:0000000002", ms: 10) { event in heard.withLock { $0.append(event.kind) } }
        #expect(Self.dropped(restarted).isEmpty)
        #expect(table.observer(of: "rate-limit:user:0000000002") === kept, "the next start took the kept slot")
        // The slot is a new registration: it hears the new observer's events.
        for delivery in restarted.events { delivery.slot.deliver(delivery.event, generation: delivery.generation) }
        #expect(heard.withLock { $0 } == [.tick])
    }

    @Test("a slot something else holds is never reused: the start makes a new one and the place lets the old one go")
    func heldSlotIsNotReused() throws {
        var table = CountdownTableTests.table()
        let started = try Self.start(&table, "sms-code:+8613800000001", ms: 0) { _ in }
        // The start's tick is still queued: the cancel finds its ticket undelivered and revokes.
        let old = try #require(table.observer(of: "sms-code:+8613800000001"))
        let revoked = Self.cancel(&table, "sms-code:+8613800000001", deliveredBelow: 0)
        #expect(revoked.effects.contains { if case .revoke(let slot) = $0 { slot === old } else { false } })
        // Revoked slots leave their place.
        let restarted = try Self.start(&table, "sms-code:+8613800000002", ms: 10) { _ in }
        #expect(table.observer(of: "sms-code:+8613800000002") !== old)
        #expect(Self.dropped(restarted).isEmpty, "the place kept nothing")
        // Idle, but held (here, by this test): retired whole, as before, not kept.
        let held = try #require(table.observer(of: "sms-code:+8613800000002"))
        let retired = Self.cancel(&table, "sms-code:+8613800000002", deliveredBelow: .max)
        #expect(retired.retired?.takeUnretainedValue() === held)
        #expect(Self.letGo(retired) == 0)
        retired.retired?.release()  // what the driver would do after the lock
        _ = started
    }

    @Test("a finish keeps its slot; a start while the finish is queued gets a new one; the finish's delivery lets its observer go")
    func finishKeepsTheSlot() throws {
        var table = CountdownTableTests.table()
        var token: Token? = Token()
        weak let watched = token
        let finished = Locked<Int>(0)
        let started = try Self.start(&table, "sms-code:+8613800000001", ms: 0) { [token] event in
            _ = token
            if event.kind == .finished { finished.withLock { $0 += 1 } }
        }
        token = nil
        let id = try #require(started.effects.compactMap { if case .arm(let id, _, _) = $0 { id } else { nil } }.first)
        _ = table.keep(1, for: id)
        var fire = table.fire(id, now: CountdownTableTests.at(100))
        #expect(fire.answer != .finished)
        fire = table.fire(id, now: CountdownTableTests.at(250))
        #expect(fire.answer == .finished)
        weak let kept = try #require(Array(fire.events).last?.slot)
        // The finish is queued: the place's slot is held by its delivery.
        let next = try Self.start(&table, "sms-code:+8613800000002", ms: 260) { _ in }
        #expect(table.observer(of: "sms-code:+8613800000002") !== kept, "not reused while its finish is queued")
        #expect(Self.dropped(next).count == 1 && Self.dropped(next).first === kept, "the place let go of the kept slot")
        #expect(watched != nil)
        // Delivered: the observer heard the finish and was let go of then, the slot still held.
        for delivery in fire.events { delivery.slot.deliver(delivery.event, generation: delivery.generation) }
        #expect(finished.withLock { $0 } == 1)
        #expect(watched == nil, "the finish's delivery let the observer go")
        #expect(kept != nil)
    }

    @Test("a finish delivered before the place's next start hands that start its slot")
    func finishedSlotIsReused() throws {
        var table = CountdownTableTests.table()
        let started = try Self.start(&table, "sms-code:+8613800000001", ms: 0) { _ in }
        let id = try #require(started.effects.compactMap { if case .arm(let id, _, _) = $0 { id } else { nil } }.first)
        _ = table.keep(1, for: id)
        _ = table.fire(id, now: CountdownTableTests.at(100))
        var fire = table.fire(id, now: CountdownTableTests.at(250))
        #expect(fire.answer == .finished)
        weak let kept = try #require(Array(fire.events).last?.slot)
        for delivery in fire.events { delivery.slot.deliver(delivery.event, generation: delivery.generation) }
        fire = Table.Decision(answer: .stale)
        _ = consume started
        let next = try Self.start(&table, "sms-code:+8613800000002", ms: 260) { _ in }
        #expect(Self.dropped(next).isEmpty)
        #expect(kept != nil && table.observer(of: "sms-code:+8613800000002") === kept)
    }

    @Test("a stream's slot and the shared silent slot are never kept by a finished place")
    func sharedSlotsAreNotKept() throws {
        var table = CountdownTableTests.table()
        let started = try Self.start(&table, "sms-code:+8613800000001", ms: 0) { _ in }
        let stream = CountdownTableTests.Ear()
        _ = table.attach(key: "sms-code:+8613800000001", observer: stream.slot, ended: {}, now: CountdownTableTests.at(10))
        let id = try #require(started.effects.compactMap { if case .arm(let id, _, _) = $0 { id } else { nil } }.first)
        _ = table.keep(1, for: id)
        _ = table.fire(id, now: CountdownTableTests.at(100))
        let fire = table.fire(id, now: CountdownTableTests.at(250))
        #expect(fire.answer == .finished)
        #expect(Array(fire.events).last?.slot === stream.slot)
        let next = try Self.start(&table, "sms-code:+8613800000002", ms: 260) { _ in }
        #expect(Self.dropped(next).isEmpty, "the stream's slot went with its finish")
        #expect(table.observer(of: "sms-code:+8613800000002") !== stream.slot)
    }
}
