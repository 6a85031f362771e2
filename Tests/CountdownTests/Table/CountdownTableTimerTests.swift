import Testing

@testable import Countdown

/// The table's timers and lifetime: a pause's grid, a cancel's observer, stale timers, handles
/// kept across pauses, the shutdown, the store's change count.
extension CountdownTableTests {
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
