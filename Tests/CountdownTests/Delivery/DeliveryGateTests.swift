import Synchronization
import Testing

@testable import Countdown

/// The observer lives in its countdown's place, and a delivery is checked against the place's
/// gate: the table's decisions about places and gates, with made-up instants and deliveries run
/// by hand, late, as a delivery queue that lags would run them.
@Suite("Delivery gates")
struct DeliveryGateTests {
    typealias Table = CountdownTableTests.Table
    typealias Ear = CountdownTableTests.Ear

    static func at(_ ms: Int) -> Moment { CountdownTableTests.at(ms) }

    static func start(_ table: inout Table, _ key: String, _ ear: Ear, ms: Int, deliveredBelow: UInt64 = 0,
                      duration: Duration = .milliseconds(250)) throws -> CountdownTableTests.Decided<CountdownStart> {
        try CountdownTableTests.decide(&table) {
            try $0.start(
                key: key, hash: KeyIndex.Hash(key, hasher: $0.keyHasher), duration: duration, observer: ear.observer,
                now: at(ms), deliveredBelow: deliveredBelow)
        }
    }

    static func place(_ table: Table, _ key: String) throws -> UInt32 {
        try #require(table.observation(of: key)).registration.place
    }

    /// Fires `key`'s countdown, armed as `started` says, until it finishes; returns the finish's
    /// decision, its events not delivered.
    static func finish(_ table: inout Table, _ started: CountdownTableTests.Decided<CountdownStart>, ms: Int) throws
        -> CountdownTableTests.Decided<Table.FireResult>
    {
        let id = try #require(CountdownTableTests.arms(started).first)
        _ = table.keep(1, for: id)
        var now = ms
        while true {
            now += 50
            let fired = CountdownTableTests.decide(&table) { $0.fire(id, now: at(now)) }
            if fired.answer == .finished { return fired }
            CountdownTableTests.deliver(fired)
        }
    }

    @Test("a place a finish freed is reused only once its finish is delivered: the next occupant's cancel never silences it")
    func finishedPlaceWaitsForItsFinish() throws {
        var table = CountdownTableTests.table()
        let first = Ear(), second = Ear(), third = Ear()
        let started = try Self.start(&table, "sms-code:+8613800000001", first, ms: 0)
        CountdownTableTests.deliver(started)
        let freed = try Self.place(table, "sms-code:+8613800000001")
        let finished = try Self.finish(&table, started, ms: 0)
        // The finish is queued: a start, told so, takes a new place.
        let next = try Self.start(&table, "sms-code:+8613800000002", second, ms: 260, deliveredBelow: finished.ticket)
        #expect(try Self.place(table, "sms-code:+8613800000002") != freed)
        // Cancelled with its tick queued: revoked. The finish queued before it is heard all the same.
        _ = table.cancel(key: "sms-code:+8613800000002", deliveredBelow: 0)
        #expect(CountdownTableTests.refused(next))
        CountdownTableTests.deliver(finished)
        #expect(first.heard.last == .finished("sms-code:+8613800000001"))
        CountdownTableTests.deliver(next)
        #expect(second.heard.isEmpty)
        // Delivered: a start takes the place the cancel freed, the next one the place the finish freed.
        let cancelledPlace = try Self.start(&table, "sms-code:+8613800000003", Ear(), ms: 270, deliveredBelow: finished.ticket + 1)
        #expect(try Self.place(table, "sms-code:+8613800000003") != freed)
        let later = try Self.start(&table, "sms-code:+8613800000004", third, ms: 270, deliveredBelow: finished.ticket + 1)
        #expect(try Self.place(table, "sms-code:+8613800000004") == freed)
        CountdownTableTests.deliver(later)
        #expect(third.heard == [.tick("sms-code:+8613800000004", .milliseconds(250))])
        _ = cancelledPlace
    }

    @Test("a place a cancel freed is reused at once: its last observer's queued tick is refused, its next one's heard")
    func cancelledPlaceIsReusedAtOnce() throws {
        var table = CountdownTableTests.table()
        let first = Ear(), second = Ear()
        let started = try Self.start(&table, "sms-code:+8613800000001", first, ms: 0)
        let freed = try Self.place(table, "sms-code:+8613800000001")
        let cancelled = table.cancel(key: "sms-code:+8613800000001", deliveredBelow: 0)
        #expect(CountdownTableTests.lettingGo(cancelled) == 1)
        let next = try Self.start(&table, "sms-code:+8613800000002", second, ms: 10)
        #expect(try Self.place(table, "sms-code:+8613800000002") == freed, "the last place freed is taken first")
        CountdownTableTests.deliver(started)
        CountdownTableTests.deliver(next)
        #expect(first.heard.isEmpty, "a tick queued before the cancel was heard")
        #expect(second.heard == [.tick("sms-code:+8613800000002", .milliseconds(250))])
    }

    @Test("a detach silences its registration only: a stale one detaches nothing, and the countdown runs on unobserved")
    func detachNamesItsRegistration() throws {
        var table = CountdownTableTests.table()
        let starter = Ear(), stream = Ear(), later = Ear()
        _ = try Self.start(&table, "k", starter, ms: 0, duration: .seconds(5))
        var registration: ObserverRegistration?
        let attached = CountdownTableTests.decide(&table) { $0.attach(key: "k", observer: stream.observer, ended: { }, now: Self.at(10), registration: &registration) }
        let named = try #require(registration)
        let detached = table.detach(key: "k", registration: named)
        #expect(detached.effects.contains { if case .endStream = $0 { true } else { false } })
        #expect(CountdownTableTests.lettingGo(detached) == 1)
        #expect(CountdownTableTests.refused(attached), "the stream's queued tick is refused")
        #expect(table.observation(of: "k")?.observed == false)
        // Nothing is decided for a countdown nobody observes.
        let resumed = CountdownTableTests.decide(&table) { $0.attach(key: "k", observer: later.observer, now: Self.at(20)) }
        #expect(table.detach(key: "k", registration: named).effects.isEmpty, "a stale registration detaches nothing")
        #expect(table.observation(of: "k")?.observed == true)
        CountdownTableTests.deliver(resumed)
        #expect(later.heard.count == 1)
    }

    @Test("registrations compare as serial numbers: a gate that wrapped refuses what came before and admits what comes after")
    func registrationsWrap() {
        let word = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 1)
        word.initialize(to: Atomic(0))
        defer {
            word.deinitialize(count: 1)
            word.deallocate()
        }
        let gate = DeliveryGate(word: word)
        gate.revoke(below: UInt32.max)
        #expect(!gate.admits(registration: UInt32.max - 1, generation: 0))
        #expect(gate.admits(registration: UInt32.max, generation: 0))
        gate.revoke(below: 1)  // wrapped: two registrations later
        #expect(!gate.admits(registration: UInt32.max, generation: 0), "a registration from before the wrap")
        #expect(!gate.admits(registration: 0, generation: 0))
        #expect(gate.admits(registration: 1, generation: 0) && gate.admits(registration: 2, generation: 0))
        gate.silence(below: 3)
        #expect(!gate.admits(registration: 1, generation: 2), "decided before the pause")
        #expect(gate.admits(registration: 1, generation: 3) && gate.admits(registration: 1, generation: Delivery.answer))
    }
}
