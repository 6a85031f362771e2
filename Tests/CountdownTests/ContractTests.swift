import Dispatch
import Foundation
import Testing

@testable import Countdown

/// The contract of DESIGN.md, run on every backend. Bounds are one-sided ("not before") or
/// generous (seconds, against ticks of tens of milliseconds); every wait has a watchdog.
@Suite("Contract", .dedicatedThread, .timeLimit(.minutes(2)))
struct ContractTests {
    @Test("start delivers the full duration at once, on the delivery queue", arguments: allBackends)
    func startTicksAtOnce(backend: CountdownBackend) async throws {
        // A tick of 10 s: a first event within 3 s can only be the immediate one.
        let queue = MarkedQueue()
        let scheduler = try makeScheduler(backend, tick: .seconds(10), queue: queue)
        defer { scheduler.shutdown() }
        let log = EventLog(deliveryQueue: queue)
        let before = monotonicNow()
        let outcome = try scheduler.start(key: "sms", duration: .seconds(60), observer: log.observer)
        #expect(outcome == .started)
        #expect(await log.wait(timeout: .seconds(3)) { !$0.isEmpty }, "no immediate tick")
        let first = try #require(log.all.first)
        #expect(first.event == CountdownEvent(key: "sms", kind: .tick, remaining: .seconds(60)))
        #expect(first.onDeliveryQueue)
        #expect(first.at - before < 3_000_000_000)
        #expect(scheduler.activeKeys == ["sms"])
        #expect(scheduler.activeCount == 1)
        let remaining = try #require(scheduler.remaining(key: "sms"))
        #expect(remaining <= .seconds(60) && remaining > .seconds(50))
        #expect(scheduler.remaining(key: "other") == nil)
    }

    @Test("ticks every T with exact counts, never early; one finish, never early", arguments: allBackends)
    func tickSequenceAndFinish(backend: CountdownBackend) async throws {
        let tick = Duration.milliseconds(30), duration = Duration.milliseconds(300)
        let queue = MarkedQueue()
        let scheduler = try makeScheduler(backend, tick: tick, queue: queue)
        defer { scheduler.shutdown() }
        let log = EventLog(deliveryQueue: queue)
        let before = monotonicNow()
        try scheduler.start(key: "k", duration: duration, observer: log.observer)
        #expect(await log.waitForFinish(), "no finish")
        // Three more ticks' worth of silence: a second finish or a late tick would show.
        settle(for: .milliseconds(100))
        queue.drain()

        let records = log.all
        expectWellFormed(records, backend.description)
        #expect(records.allSatisfy { $0.onDeliveryQueue })
        let ticks = records.filter { $0.event.kind == .tick }
        expectNeverEarly(ticks, duration: duration, start: before)
        for (k, record) in ticks.enumerated() {
            // Tick k is at grid point k or later (a timestamp backend skips missed points),
            // so it carries at most D − k·T; more means its deadline and its grid disagree.
            #expect(record.event.remaining <= duration - tick * k + .milliseconds(1),
                    "tick \(k) carries \(record.event.remaining)")
        }
        if scheduler.profile.suspension == .finishesLateByFreeze {
            // Counting backends count every fire: ten ticks, each a whole tick less, whatever
            // the load. (Timestamp backends skip grid points missed during a stall: fewer.)
            #expect(ticks.map(\.event.remaining) == (0..<10).map { duration - tick * $0 })
        } else {
            #expect((2...10).contains(ticks.count), "\(ticks.map(\.event.remaining))")
        }
        #expect(log.finishes.count == 1)
        let finish = try #require(log.finishes.first)
        #expect(finish.at + granularity >= before + ns(duration), "finished before the deadline")
        #expect(scheduler.activeCount == 0)
        #expect(scheduler.remaining(key: "k") == nil)

        // The key is free again.
        let again = EventLog()
        #expect(try scheduler.start(key: "k", duration: .seconds(5), observer: again.observer) == .started)
    }

    @Test("a duration that is not a whole number of ticks finishes at its deadline", arguments: allBackends)
    func partialLastInterval(backend: CountdownBackend) async throws {
        let scheduler = try makeScheduler(backend, tick: .milliseconds(100))
        defer { scheduler.shutdown() }
        let log = EventLog()
        let before = monotonicNow()
        try scheduler.start(key: "k", duration: .milliseconds(250), observer: log.observer)
        #expect(await log.waitForFinish())
        settle(for: .milliseconds(50))
        expectWellFormed(log.all, backend.description)
        expectNeverEarly(log.ticks, duration: .milliseconds(250), start: before)
        #expect(log.ticks.count <= 3, "\(log.ticks.map(\.event.remaining))")
        let finish = try #require(log.finishes.first)
        #expect(finish.at + granularity >= before + 250_000_000)
        if scheduler.profile.suspension == .finishesLateByFreeze {
            #expect(log.ticks.map(\.event.remaining) == [.milliseconds(250), .milliseconds(150), .milliseconds(50)])
        }
    }

    @Test("attach replaces the observer, keeps the deadline, ticks at once", arguments: allBackends)
    func attach(backend: CountdownBackend) async throws {
        let queue = MarkedQueue()
        let tick = Duration.milliseconds(20), duration = Duration.seconds(4)
        let scheduler = try makeScheduler(backend, tick: tick, queue: queue)
        defer { scheduler.shutdown() }
        let old = EventLog(deliveryQueue: queue), new = EventLog(deliveryQueue: queue)
        let before = monotonicNow()
        try scheduler.start(key: "sms", duration: duration, observer: old.observer)
        // Counted, not slept: the first tick and 24 more mean at least 24 ticks have passed.
        #expect(await old.wait { $0.count >= 25 })

        // Attached on the delivery queue, nothing of the old observer's can be in flight.
        let (outcome, oldCount, attachedAt) = try queue.queue.sync {
            let outcome = try scheduler.start(key: "sms", duration: duration, observer: new.observer)
            return (outcome, old.count, monotonicNow())
        }
        guard case .attached(let remaining) = outcome else {
            Issue.record("expected attached, got \(outcome)")
            return
        }
        // A restart would say 4 s; 24 ticks have passed, so at most 4 s − 24·T remain.
        #expect(remaining > .zero && remaining <= duration - tick * 24 + .milliseconds(1),
                "attached with \(remaining)")
        #expect(await new.waitForFinish(), "the new observer heard no finish")
        settle(for: .milliseconds(60))
        queue.drain()

        // The same behind a busy queue: ticks queued for the old observer stay silent.
        let behind = EventLog(deliveryQueue: queue), successor = EventLog(deliveryQueue: queue)
        try scheduler.start(key: "held", duration: duration, observer: behind.observer)
        #expect(await behind.wait { $0.count >= 2 })
        let behindCount = try queue.holding {
            let count = behind.count  // nothing is delivered while the queue is held
            settle(for: .milliseconds(60))
            _ = try scheduler.start(key: "held", duration: duration, observer: successor.observer)
            return count
        }
        #expect(await successor.wait { $0.count >= 2 })
        queue.drain()
        #expect(behind.count == behindCount, "ticks queued before the attach reached the old observer")

        #expect(old.count == oldCount, "the old observer heard \(old.all.dropFirst(oldCount).map(\.event))")
        #expect(old.finishes.isEmpty)
        let first = try #require(new.all.first)
        #expect(first.event == CountdownEvent(key: "sms", kind: .tick, remaining: remaining))
        #expect(first.at - attachedAt < 3_000_000_000, "the attach tick was not immediate")
        expectWellFormed(new.all, backend.description)
        #expect(new.finishes.count == 1)
        let finish = try #require(new.finishes.first)
        #expect(finish.at + granularity >= before + ns(duration))
        // Not extended: a countdown restarted at the attach could not finish before this.
        #expect(finish.at < attachedAt + ns(duration), "finished as if restarted at the attach")
    }

    @Test("attach(key:) attaches to a running countdown and never starts one", arguments: allBackends)
    func attachOnly(backend: CountdownBackend) async throws {
        let queue = MarkedQueue()
        let scheduler = try makeScheduler(backend, tick: .milliseconds(20), queue: queue)
        defer { scheduler.shutdown() }
        let stray = EventLog(deliveryQueue: queue)
        #expect(scheduler.attach(key: "sms", observer: stray.observer) == nil)
        #expect(scheduler.activeCount == 0, "attach started a countdown")

        let first = EventLog(deliveryQueue: queue), second = EventLog(deliveryQueue: queue)
        try scheduler.start(key: "sms", duration: .seconds(3), observer: first.observer)
        #expect(await first.wait { $0.count >= 5 })
        let (remaining, firstCount) = queue.queue.sync {
            (scheduler.attach(key: "sms", observer: second.observer), first.count)
        }
        let told = try #require(remaining, "no countdown to attach to")
        #expect(told > .zero && told <= .seconds(3) - .milliseconds(80) + .milliseconds(1))
        #expect(await second.wait { $0.count >= 3 })
        queue.drain()
        #expect(second.all.first?.event == CountdownEvent(key: "sms", kind: .tick, remaining: told))
        #expect(first.count == firstCount, "the replaced observer kept hearing")
        expectWellFormed(second.all, backend.description)
        settle(for: .milliseconds(50))
        #expect(stray.count == 0, "the observer of a refused attach was called")
    }

    @Test("cancel reports whether a countdown ran, and nothing begins after it", arguments: allBackends)
    func cancel(backend: CountdownBackend) async throws {
        let queue = MarkedQueue()
        let scheduler = try makeScheduler(backend, tick: .milliseconds(10), queue: queue)
        defer { scheduler.shutdown() }
        #expect(scheduler.cancel(key: "nobody") == false)

        // From another thread: once cancel returned and the queue drained, silence.
        let fromThread = EventLog(deliveryQueue: queue)
        try scheduler.start(key: "a", duration: .seconds(5), observer: fromThread.observer)
        #expect(await fromThread.wait { $0.count >= 3 })
        #expect(scheduler.cancel(key: "a"))
        queue.drain()
        let countAfterCancel = fromThread.count
        #expect(scheduler.cancel(key: "a") == false)
        #expect(scheduler.remaining(key: "a") == nil)

        // On the delivery queue: exact, no draining needed.
        let onQueue = EventLog(deliveryQueue: queue)
        try scheduler.start(key: "b", duration: .seconds(5), observer: onQueue.observer)
        #expect(await onQueue.wait { $0.count >= 3 })
        let (cancelled, countAtCancel) = queue.queue.sync { (scheduler.cancel(key: "b"), onQueue.count) }
        #expect(cancelled)

        // Ticks already queued behind a busy delivery queue are silenced by the cancel.
        let queued = EventLog(deliveryQueue: queue)
        try scheduler.start(key: "q", duration: .seconds(5), observer: queued.observer)
        #expect(await queued.wait { $0.count >= 2 })
        let countBeforeHold = queue.holding {
            let count = queued.count  // nothing is delivered while the queue is held
            settle(for: .milliseconds(60))  // six ticks queue up behind the hold
            #expect(scheduler.cancel(key: "q"))
            return count
        }

        // A paused countdown is cancelled too.
        let paused = EventLog(deliveryQueue: queue)
        try scheduler.start(key: "c", duration: .seconds(5), observer: paused.observer)
        #expect(scheduler.pause(key: "c"))
        #expect(scheduler.cancel(key: "c"))

        settle(for: .milliseconds(150))  // fifteen ticks of silence
        queue.drain()
        #expect(fromThread.count == countAfterCancel)
        #expect(queued.count == countBeforeHold, "queued ticks were delivered after cancel returned")
        #expect(onQueue.count == countAtCancel)
        #expect(fromThread.finishes.isEmpty && onQueue.finishes.isEmpty && paused.finishes.isEmpty)
        #expect(scheduler.activeCount == 0)
    }

    @Test("pause freezes, resume continues, the deadline moves by the pause", arguments: allBackends)
    func pauseAndResume(backend: CountdownBackend) async throws {
        let queue = MarkedQueue()
        let duration = Duration.seconds(2)
        let scheduler = try makeScheduler(backend, tick: .milliseconds(20), queue: queue)
        defer { scheduler.shutdown() }
        let log = EventLog(deliveryQueue: queue)
        #expect(scheduler.pause(key: "k") == false)
        #expect(scheduler.resume(key: "k") == false)

        let before = monotonicNow()
        try scheduler.start(key: "k", duration: duration, observer: log.observer)
        #expect(scheduler.resume(key: "k") == false, "resumed a running countdown")
        #expect(await log.wait { $0.count >= 10 })
        #expect(scheduler.pause(key: "k"))
        let pausedAfter = monotonicNow()
        #expect(scheduler.pause(key: "k") == false, "paused a paused countdown")
        queue.drain()
        let countAtPause = log.count
        let frozen = try #require(scheduler.remaining(key: "k"), "the countdown ended before the pause")
        #expect(frozen > .zero && frozen < duration)

        settle(for: .milliseconds(300))
        queue.drain()
        #expect(log.count == countAtPause, "ticks while paused: \(log.all.dropFirst(countAtPause).map(\.event))")
        #expect(scheduler.remaining(key: "k") == frozen, "remaining moved while paused")
        #expect(scheduler.activeKeys == ["k"])

        let resumedBefore = monotonicNow()
        #expect(scheduler.resume(key: "k"))
        #expect(scheduler.resume(key: "k") == false)
        #expect(await log.waitForFinish())
        settle(for: .milliseconds(60))
        queue.drain()

        expectWellFormed(log.all, backend.description)
        let afterResume = Array(log.all.dropFirst(countAtPause))
        #expect(afterResume.count >= 2, "no ticks after the resume")
        if let firstAfter = afterResume.first, firstAfter.event.kind == .tick {
            #expect(firstAfter.event.remaining <= frozen)
        }
        let pausedAtLeast = resumedBefore - pausedAfter
        let finish = try #require(log.finishes.first)
        #expect(finish.at + granularity >= before + ns(duration) + pausedAtLeast,
                "finished before the deadline moved by the pause")
        #expect(log.finishes.count == 1)
    }

    @Test("bad input throws a typed error and changes nothing", arguments: allBackends)
    func badInput(backend: CountdownBackend) async throws {
        let scheduler = try makeScheduler(backend, tick: .milliseconds(20), maximumDuration: .seconds(10))
        defer { scheduler.shutdown() }
        let running = EventLog()
        try scheduler.start(key: "running", duration: .seconds(5), observer: running.observer)
        let rejected = EventLog()

        #expect(throws: CountdownError.emptyKey) {
            try scheduler.start(key: "", duration: .seconds(1), observer: rejected.observer)
        }
        #expect(throws: CountdownError.nonPositiveDuration(.zero)) {
            try scheduler.start(key: "zero", duration: .zero, observer: rejected.observer)
        }
        #expect(throws: CountdownError.nonPositiveDuration(.seconds(-1))) {
            try scheduler.start(key: "negative", duration: .seconds(-1), observer: rejected.observer)
        }
        #expect(throws: CountdownError.durationAboveMaximum(.seconds(11), maximum: .seconds(10))) {
            try scheduler.start(key: "long", duration: .seconds(11), observer: rejected.observer)
        }
        // Refused for the running key too: not an attach.
        #expect(throws: CountdownError.durationAboveMaximum(.seconds(11), maximum: .seconds(10))) {
            try scheduler.start(key: "running", duration: .seconds(11), observer: rejected.observer)
        }
        #expect(scheduler.profile.maximumDuration == .seconds(10))

        #expect(await running.wait { $0.count >= 3 }, "the running countdown stopped ticking")
        settle(for: .milliseconds(60))
        #expect(rejected.count == 0, "a refused request was delivered to")
        #expect(scheduler.activeKeys == ["running"])

        scheduler.shutdown()
        #expect(throws: CountdownError.shutDown) {
            try scheduler.start(key: "late", duration: .seconds(1), observer: rejected.observer)
        }
    }

    @Test("a tick interval that is not positive, or too short, is refused", arguments: allBackends)
    func badTickInterval(backend: CountdownBackend) {
        #expect(throws: CountdownError.nonPositiveTickInterval(.zero)) {
            _ = try backend.makeScheduler(.init(tickInterval: .zero))
        }
        #expect(throws: CountdownError.nonPositiveTickInterval(.milliseconds(-5))) {
            _ = try backend.makeScheduler(.init(tickInterval: .milliseconds(-5)))
        }
        #expect(throws: CountdownError.tickIntervalTooShort(.microseconds(10), minimum: .milliseconds(1))) {
            _ = try backend.makeScheduler(.init(tickInterval: .microseconds(10)))
        }
        #expect(throws: CountdownError.self) {
            _ = try backend.makeScheduler(.init(maximumDuration: .zero))
        }
    }

    @Test("observers may call back into the scheduler", arguments: allBackends)
    func reentrantCalls(backend: CountdownBackend) async throws {
        let scheduler = try makeScheduler(backend, tick: .milliseconds(15))
        defer { scheduler.shutdown() }
        let done = Locked<[String]>([])
        let followUp = EventLog()
        try scheduler.start(key: "outer", duration: .seconds(5)) { event in
            guard event.kind == .tick, event.remaining < .seconds(5) else { return }
            // Second tick: exercise every method from inside the callback.
            _ = scheduler.remaining(key: "outer")
            _ = scheduler.activeKeys
            _ = scheduler.pause(key: "outer")
            _ = scheduler.resume(key: "outer")
            _ = try? scheduler.start(key: "outer", duration: .seconds(5)) { _ in }  // attach
            _ = try? scheduler.start(key: "inner", duration: .milliseconds(60), observer: followUp.observer)
            let cancelled = scheduler.cancel(key: "outer")
            done.withLock { $0.append("cancelled=\(cancelled)") }
        }
        // A deadlock would leave `done` empty: the watchdog turns it into a failure.
        #expect(await eventually { !done.withLock { $0 }.isEmpty }, "the re-entrant callback never returned")
        #expect(done.withLock { $0 } == ["cancelled=true"])
        #expect(await followUp.waitForFinish(), "the countdown started from a callback never finished")
        #expect(await eventually { scheduler.activeCount == 0 })
    }

    @Test("concurrent calls from many threads keep every observer's events well formed",
          arguments: allBackends)
    func concurrentCalls(backend: CountdownBackend) async throws {
        let queue = MarkedQueue()
        let scheduler = try makeScheduler(backend, tick: .milliseconds(5), queue: queue)
        defer { scheduler.shutdown() }
        let keys = (0..<16).map { "key\($0)" }
        let logs = Locked<[EventLog]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var generator = SplitMix(seed: UInt64(thread) &+ 17)
            for _ in 0..<150 {
                let key = keys[Int(generator.next() % UInt64(keys.count))]
                switch generator.next() % 6 {
                case 0, 1:
                    let log = EventLog(deliveryQueue: queue)
                    logs.withLock { $0.append(log) }
                    let ms = 10 + Int64(generator.next() % 60)
                    _ = try? scheduler.start(key: key, duration: .milliseconds(ms), observer: log.observer)
                case 2: _ = scheduler.cancel(key: key)
                case 3: _ = scheduler.pause(key: key)
                case 4: _ = scheduler.resume(key: key)
                default: _ = scheduler.remaining(key: key)
                }
            }
        }
        for key in keys { _ = scheduler.resume(key: key) }
        #expect(await eventually(timeout: .seconds(20)) { scheduler.activeCount == 0 },
                "\(scheduler.activeCount) countdowns never finished")
        queue.drain()
        let allLogs = logs.withLock { $0 }
        #expect(allLogs.count > 50)
        for log in allLogs {
            expectWellFormed(log.all, backend.description)
            #expect(log.all.allSatisfy { $0.onDeliveryQueue })
        }
        #expect(allLogs.contains { !$0.finishes.isEmpty }, "no countdown finished")
    }

    @Test("the scheduler lets go of observers that finished, were cancelled or replaced",
          arguments: allBackends)
    func observersAreReleased(backend: CountdownBackend) async throws {
        let queue = MarkedQueue()
        let scheduler = try makeScheduler(backend, tick: .milliseconds(10), queue: queue)
        defer { scheduler.shutdown() }
        let finished = Flag()
        // Made in a function, so that the test itself holds no reference to the observers.
        let finishing = try startWatched(scheduler, key: "finish", duration: .milliseconds(40), finished)
        let cancelled = try startWatched(scheduler, key: "cancel", duration: .seconds(5))
        let replaced = try startWatched(scheduler, key: "replace", duration: .seconds(5))
        let replacement = try startWatched(scheduler, key: "other", duration: .seconds(5))
        #expect(finishing.isAlive && cancelled.isAlive && replaced.isAlive, "released too early")

        #expect(await eventually { finished.isSet })
        #expect(scheduler.cancel(key: "cancel"))
        let attached = try startWatched(scheduler, key: "replace", duration: .seconds(5))
        queue.drain()
        #expect(await eventually { !finishing.isAlive }, "kept the finished observer")
        #expect(await eventually { !cancelled.isAlive }, "kept the cancelled observer")
        #expect(await eventually { !replaced.isAlive }, "kept the replaced observer")
        // The live ones are kept: the checks above can tell.
        #expect(attached.isAlive && replacement.isAlive)
    }

    @Test("shutdown cancels every countdown, silences observers, is idempotent", arguments: allBackends)
    func shutdown(backend: CountdownBackend) async throws {
        let queue = MarkedQueue()
        let scheduler = try makeScheduler(backend, tick: .milliseconds(10), queue: queue)
        let logs = (0..<5).map { _ in EventLog(deliveryQueue: queue) }
        for (i, log) in logs.enumerated() {
            try scheduler.start(key: "k\(i)", duration: .seconds(5), observer: log.observer)
        }
        #expect(scheduler.pause(key: "k0"))
        #expect(await eventually { logs[1].count >= 3 })
        let counts = queue.holding {
            let counts = logs.map(\.count)  // nothing is delivered while the queue is held
            settle(for: .milliseconds(50))  // ticks queue up behind the hold
            scheduler.shutdown()
            return counts
        }
        scheduler.shutdown()
        #expect(scheduler.activeCount == 0)
        settle(for: .milliseconds(100))
        queue.drain()
        #expect(logs.map(\.count) == counts, "events after shutdown")
        #expect(logs.allSatisfy { $0.finishes.isEmpty })
    }
}

/// A small deterministic generator, so a failing interleaving's operations can be re-run.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}


/// Something an observer holds, so a test can see when the observer is released.
final class Token: Sendable {}

/// `@unchecked Sendable`: set once before it is shared; Swift's weak loads are thread-safe.
final class WeakToken: @unchecked Sendable {
    weak var token: Token?
    init(_ token: Token) { self.token = token }
    var isAlive: Bool { token != nil }
}

/// Starts a countdown whose observer is the only holder of a token.
func startWatched(
    _ scheduler: any CountdownScheduler, key: String, duration: Duration, _ finished: Flag? = nil
) throws -> WeakToken {
    let token = Token()
    try scheduler.start(key: key, duration: duration) { event in
        _ = token
        if event.kind == .finished { finished?.set() }
    }
    return WeakToken(token)
}
