import CountdownSupport
import Dispatch
import Synchronization
import Testing

@testable import Countdown
@testable import CountdownBenchKit
@testable import CountdownConformance

/// The recommended backend's engine on real threads: its tolerance, its places, its drain beside the ticker.
@Suite("Timestamp engine", .dedicatedThread, .timeLimit(.minutes(2)))
struct TimestampEngineTests {
    @Test("a tolerance is declared in the profile; one out of range is refused with a typed error")
    func toleranceIsDeclaredAndChecked() throws {
        let scheduler = try TimestampScheduler(tickInterval: .milliseconds(100), tolerance: .milliseconds(10))
        defer { scheduler.shutdown() }
        #expect(scheduler.profile.tolerance == .milliseconds(10))
        #expect(scheduler.profile.displayName == "timestamp(wall~10ms)")
        #expect(try TimestampScheduler().profile.tolerance == .zero)
        for refused in [Duration.milliseconds(-1), .milliseconds(100), .seconds(1)] {
            #expect(throws: CountdownError.self, "tolerance \(refused)") {
                try TimestampScheduler(tickInterval: .milliseconds(100), tolerance: refused)
            }
        }
        // The catalogue's option fits a short tick: half the tick, and says so.
        let short = try CountdownBackend.timestamp(.continuous, tolerance: .milliseconds(10))
            .makeScheduler(.init(tickInterval: .milliseconds(8)))
        defer { short.shutdown() }
        #expect(short.profile.tolerance == .milliseconds(4))
    }

    @Test("with a tolerance, no tick and no finish comes before its time")
    func toleranceNeverMakesAnEventEarly() throws {
        let tick = Duration.milliseconds(20), duration = Duration.milliseconds(250)
        let scheduler = try TimestampScheduler(
            tickInterval: tick, clock: .continuous, tolerance: .milliseconds(15))
        defer { scheduler.shutdown() }
        var logs: [(start: UInt64, log: Recorder)] = []
        for index in 0..<40 {
            let log = recorder()
            let start = SystemClocks.monotonic()
            try scheduler.start(key: "k\(index)", duration: duration, observer: log.observer)
            logs.append((start, log))
            settle(.milliseconds(1))
        }
        for (start, log) in logs {
            #expect(log.waitForFinish(), "a countdown never finished")
            let records = log.all
            expectWellFormed(records)
            for record in records.dropFirst() {
                // Remaining names the grid point: never before start + (duration − remaining).
                let due = start + nanoseconds(duration - record.event.remaining)
                #expect(record.at + ClockAllowance.process >= due, "\(record.event) came \(Double(due - record.at) / 1e6) ms early")
            }
        }
    }

    @Test("a place reused by a new countdown is not driven by the old one's timer")
    func reusedPlacesIgnoreStaleTimers() throws {
        let scheduler = try TimestampScheduler(tickInterval: .milliseconds(50), clock: .continuous)
        defer { scheduler.shutdown() }
        // Each cancel leaves a queued due item behind; the next start takes the same place.
        for round in 0..<20 {
            try scheduler.start(key: "old\(round)", duration: .seconds(5)) { _ in }
            #expect(scheduler.cancel(key: "old\(round)"))
        }
        let log = recorder()
        let start = SystemClocks.monotonic()
        try scheduler.start(key: "new", duration: .milliseconds(300), observer: log.observer)
        #expect(log.waitForFinish())
        let records = log.all
        expectWellFormed(records)
        #expect(records.count <= 7, "stale timers drove extra events: \(records.map(\.event))")
        let finish = try #require(records.last)
        #expect(finish.at + ClockAllowance.process >= start + 300_000_000, "finished early")
        #expect(scheduler.activeCount == 0)
    }

    /// Something an observer holds, which tells when the scheduler let the observer go.
    final class Held: Sendable {
        final class Gone: Sendable {
            private let flag = Atomic(false)
            var value: Bool { flag.load(ordering: .acquiring) }
            func set() { flag.store(true, ordering: .releasing) }
        }
        let gone: Gone
        init(_ gone: Gone) { self.gone = gone }
        deinit { gone.set() }
    }

    @Test("a cancel lets an observer go at once, after its lock, whether a drain is queued or not; what was queued for it is refused")
    func cancelLetsTheObserverGoAtOnce() throws {
        let delivery = DispatchQueue(label: "test.idle-cancel.delivery")
        let scheduler = try TimestampScheduler(tickInterval: .seconds(60), clock: .continuous, deliveryQueue: delivery)
        defer { scheduler.shutdown() }
        let first = Held.Gone(), second = Held.Gone(), third = Held.Gone()
        for (key, flag) in [("sms-code:+8613800000001", first), ("sms-code:+8613800000002", second)] {
            let held = Held(flag)
            try scheduler.start(key: key, duration: .seconds(600)) { _ in _ = held }
        }
        // Both start ticks heard: neither observer has anything left to hear. One `sync` is not
        // always enough: a drain slowed past its turn (a loaded machine) hands the queue back and
        // leaves another queued behind this block.
        delivery.sync {}
        for _ in 0..<1_000 where scheduler.engine.isDrainQueued { delivery.sync {} }
        #expect(!scheduler.engine.isDrainQueued, "every drain ended")
        let gate = DispatchSemaphore(value: 0)
        delivery.async { gate.wait() }
        // The queue is held and no drain is queued: the cancel lets the observer go itself.
        #expect(scheduler.cancel(key: "sms-code:+8613800000001"))
        #expect(first.value, "let go by the cancel, not left for the held queue")
        // A start queues a drain (its tick waits behind the gate): a cancel lets go all the same.
        let heard = Locked(0)
        do {
            let held = Held(third)
            try scheduler.start(key: "sms-code:+8613800000003", duration: .seconds(600)) { _ in
                _ = held
                heard.withLock { $0 += 1 }
            }
        }
        #expect(scheduler.cancel(key: "sms-code:+8613800000002"))
        #expect(second.value, "let go by the cancel, a drain queued or not")
        // The third's start tick is queued behind the gate: cancelled, it is refused, and the
        // observer goes with that queued delivery.
        #expect(scheduler.cancel(key: "sms-code:+8613800000003"))
        #expect(!third.value, "its queued tick still holds it")
        gate.signal()
        delivery.sync {}
        for _ in 0..<1_000 where scheduler.engine.isDrainQueued { delivery.sync {} }
        #expect(heard.withLock { $0 } == 0, "a tick queued before the cancel was heard")
        #expect(third.value, "let go with its last queued delivery")
    }

    /// Alone only (`.ci/run` gives it a stage of its own): beside the parallel suite its thread
    /// makes too few starts for the condition it guards, and the parallel load alone skipped 26
    /// of 75 ticks in the fresh-clone CI of 0bd3951, one more than the bound allows.
    @Test("a dense stream of events does not hold the ticker's wake-ups: ticks keep coming while starts and cancels never pause", .runsAlone)
    func denseStreamLetsWakeUpsThrough() throws {
        let delivery = DispatchQueue(label: "test.dense-stream.delivery")
        let scheduler = try TimestampScheduler(tickInterval: .milliseconds(20), clock: .continuous, deliveryQueue: delivery)
        defer { scheduler.shutdown() }
        let log = recorder()
        try scheduler.start(key: "sms-code:+8613800000000", duration: .seconds(30), observer: log.observer)
        // Every start's tick is an event: a stream with no pause in it, for the drain to linger in.
        let keys = (0..<1_000).map { "rate-limit:user:\(1_000_000_000 + $0)" }
        let began = SystemClocks.monotonic(), streamFor: UInt64 = 1_500_000_000
        var pairs = 0
        while SystemClocks.monotonic() &- began < streamFor {
            let key = keys[pairs % keys.count]
            try scheduler.start(key: key, duration: .seconds(30)) { _ in }
            scheduler.cancel(key: key)
            pairs += 1
        }
        let ended = SystemClocks.monotonic()
        delivery.sync {}
        // Held behind a drain that lingered in the stream, the ticks waited for its end: 12 to
        // 32 of the 75 grid points of this stream were heard (the others skipped, as late).
        let tick: UInt64 = 20_000_000
        let due = Int((ended &- began) / tick)
        let during = log.ticks.filter { $0.at > began && $0.at < ended }
        // Two thirds: a third skipped takes half a second of stalls, even on a loaded machine.
        #expect(during.count * 3 >= due * 2,
                "\(during.count) ticks heard of the \(due) due in a \(Double(ended &- began) / 1e6) ms stream of \(pairs) starts and cancels")
    }

    @Test("a stream that never thins (each delivery decides the next event) does not hold a block queued on the delivery queue")
    func endlessStreamLetsBlocksThrough() throws {
        let delivery = DispatchQueue(label: "test.endless-stream.delivery")
        let scheduler = try TimestampScheduler(tickInterval: .seconds(60), clock: .continuous, deliveryQueue: delivery)
        defer { scheduler.shutdown() }
        let stop = Locked(false), heard = Locked(0), running = DispatchSemaphore(value: 0)
        // Each start's tick is heard on the delivery queue, where its observer makes the next
        // start: the drain always finds another event, however loaded the machine (a stream
        // made by a thread of its own thins out under load, and the drain stops lingering).
        @Sendable func restart() {
            guard !stop.withLock({ $0 }) else { return }
            _ = try? scheduler.start(key: "sms-code:+8613800000001", duration: .seconds(600)) { _ in
                if heard.withLock({ $0 += 1; return $0 }) == 1_000 { running.signal() }
                restart()
            }
        }
        restart()
        running.wait()
        let ran = DispatchSemaphore(value: 0), heardByTheBlock = Locked(0)
        delivery.async {
            heardByTheBlock.withLock { $0 = heard.withLock { $0 } }
            ran.signal()
        }
        // Without the hand-back the drain never ends, and neither does this wait but for its limit.
        let result = ran.wait(timeout: .now() + .seconds(20))
        stop.withLock { $0 = true }
        delivery.sync {}
        #expect(result == .success, "the block waited 20 s behind a drain that never handed the queue back")
        // It ran inside the stream, not after it: ticks were still heard after it.
        #expect(heard.withLock { $0 } > heardByTheBlock.withLock { $0 })
    }

    @Test("a drain that hands the queue back first delivers what was decided before: a block queued after a start finds its tick heard")
    func handingBackKeepsOneHop() throws {
        let delivery = DispatchQueue(label: "test.hand-back.delivery")
        let scheduler = try TimestampScheduler(tickInterval: .seconds(60), clock: .continuous, deliveryQueue: delivery)
        defer { scheduler.shutdown() }
        let entered = DispatchSemaphore(value: 0), go = DispatchSemaphore(value: 0)
        // The first observer holds the drain past its turn, inside its first delivery.
        try scheduler.start(key: "sms-code:+8613800000001", duration: .seconds(600)) { _ in
            entered.signal()
            go.wait()
        }
        entered.wait()
        let heard = Atomic(false)
        try scheduler.start(key: "sms-code:+8613800000002", duration: .seconds(600)) { _ in
            heard.store(true, ordering: .releasing)
        }
        // Queued after the second start decided its tick: one hop, so it runs after that tick.
        let seenByTheBlock = Locked<Bool?>(nil)
        delivery.async { seenByTheBlock.withLock { $0 = heard.load(ordering: .acquiring) } }
        settle(.milliseconds(2))
        go.signal()
        delivery.sync {}
        #expect(seenByTheBlock.withLock { $0 } == true, "the block ran before the tick of a start made before it was queued")
    }

    @Test("a countdown started while the delivery queue is held ticks once it is free: its first fire waited in the pipeline for the drain")
    func armsWaitForTheDrain() throws {
        let delivery = DispatchQueue(label: "test.arms-wait.delivery")
        let scheduler = try TimestampScheduler(tickInterval: .milliseconds(20), clock: .continuous, deliveryQueue: delivery)
        defer { scheduler.shutdown() }
        let gate = DispatchSemaphore(value: 0)
        delivery.async { gate.wait() }
        let heard = Locked(0), ticking = DispatchSemaphore(value: 0)
        try scheduler.start(key: "sms-code:+8613800000001", duration: .seconds(30)) { _ in
            if heard.withLock({ $0 += 1; return $0 }) == 4 { ticking.signal() }
        }
        // Held past several grid points: the first fire is filed only once the drain runs.
        settle(.milliseconds(100))
        gate.signal()
        let result = ticking.wait(timeout: .now() + .seconds(30))
        #expect(result == .success, "\(heard.withLock { $0 }) events heard in 30 s: the first fire was never filed")
    }

    /// At most 112 bytes, with the observer in its place (16 bytes, where a reference to a
    /// 48-byte slot allocated per start was 8): 40 bytes less a countdown than the slot's design.
    @Test("a place of the recommended engine stays within 112 bytes: at a million countdowns, each 16 bytes more are 4 000 pages faulted in while starting")
    func placeStaysSmall() {
        #expect(MemoryLayout<CountdownTable<DeadlineTrack, Void>.Place>.stride <= 112)
    }
}
