import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// One check per point of the contract in `CountdownScheduler`'s documentation.
enum ContractChecks {
    static let all: [ConformanceCheck] = [
        .init("start", .contract, "start: .started, a first tick with the full duration at once, on the delivery queue", body: start),
        .init("ticks", .contract, "a tick every T, never early, never more than D − k·T, never increasing, never zero", body: ticks),
        .init("finish", .contract, "exactly one finish, never before the deadline, nothing after it; the key is free again", body: finish),
        .init("attach", .contract, "start on a running key: observer replaced (the old one silent), no restart, no extension", body: attach),
        .init("attach-only", .contract, "attach(key:) attaches to a running countdown and never starts one", body: attachOnly),
        .init("cancel", .contract, "cancel returns whether a countdown ran; nothing begins after it returns", body: cancel),
        .init("pause-resume", .contract, "pause freezes remaining and ticks; resume continues; the deadline moves by the pause", body: pauseResume),
        .init("bad-input", .contract, "empty key, non-positive or too long durations, a bad tick interval: a typed error, nothing changed", body: badInput),
        .init("reentrancy", .contract, "observers may call every method of the scheduler without deadlock", body: reentrancy),
        .init("concurrency", .contract, "calls from many threads at once keep every observer's events well formed", body: concurrency),
        .init("delivery", .contract, "every callback runs on the delivery queue, one at a time", body: delivery),
        .init("observer-release", .contract, "no reference kept to observers that finished, were cancelled or replaced", body: observerRelease),
        .init("shutdown", .contract, "shutdown cancels everything, silences observers, refuses starts; a released scheduler ends its threads", body: shutdown),
        RandomizedCheck.check,
    ]

    static func start(_ c: CheckContext) throws {
        // A 10 s tick: a first event within 3 s can only be the immediate one.
        let h = try c.makeScheduler(tick: .seconds(10))
        let log = h.recorder()
        let before = SystemClocks.monotonic()
        let outcome = try h.scheduler.start(key: "sms", duration: .seconds(60), observer: log.observer)
        c.expect(outcome == .started, "start returned \(outcome), not started")
        guard c.expect(log.wait(timeout: .seconds(3)) { !$0.isEmpty }, "no tick within 3 s of start (tick interval 10 s)"),
              let first = log.all.first
        else { return }
        c.figure("first tick \(DurationText.nanoseconds(Double(first.at - before))) after start")
        c.expect(first.event == CountdownEvent(key: "sms", kind: .tick, remaining: .seconds(60)),
                 "the first event is \(EventRules.describe(first.event)), not tick(60 s)")
        c.expect(first.onDeliveryQueue, "the first tick did not run on the delivery queue")
        c.expect(h.scheduler.activeKeys == ["sms"], "activeKeys is \(h.scheduler.activeKeys)")
        c.expect(h.scheduler.activeCount == 1, "activeCount is \(h.scheduler.activeCount)")
        if let remaining = h.scheduler.remaining(key: "sms") {
            c.expect(remaining <= .seconds(60) && remaining > .seconds(50), "remaining(key:) is \(remaining)")
        } else {
            c.fail("remaining(key:) is nil for a running countdown")
        }
        c.expect(h.scheduler.remaining(key: "other") == nil, "remaining(key:) of an unknown key is not nil")
    }

    static func ticks(_ c: CheckContext) throws {
        let tick = Duration.milliseconds(30), duration = Duration.milliseconds(300)
        let h = try c.makeScheduler(tick: tick)
        let log = h.recorder()
        let before = SystemClocks.monotonic()
        try h.scheduler.start(key: "k", duration: duration, observer: log.observer)
        guard c.expect(log.waitForFinish(), "no finish within 10 s of a 300 ms countdown") else { return }
        h.queue.drain()
        let ticks = log.ticks
        EventRules.wellFormed(log.all, "k", in: c)
        EventRules.neverEarly(ticks, duration: duration, start: before, "k", in: c)
        for (k, record) in ticks.enumerated() {
            // Tick k is at grid point k or later (a clock-reading backend skips points missed in
            // a stall), so it carries at most D − k·T: more means its deadline and its ticks disagree.
            c.expect(record.event.remaining <= duration - tick * k + .milliseconds(1),
                     "tick \(k) carries \(record.event.remaining), more than D − k·T = \(duration - tick * k)")
        }
        let intervals = zip(ticks.dropFirst(), ticks.dropFirst(2)).map { Int64($1.at) - Int64($0.at) }
        if let worst = intervals.map({ abs($0 - Int64(nanoseconds(tick))) }).max() {
            c.figure("\(ticks.count) ticks; worst interval error \(DurationText.nanoseconds(Double(worst)))")
        }
        if h.scheduler.profile.suspension == .finishesLateByFreeze {
            // A counting backend counts every fire: ten ticks, a whole tick apart, whatever the load.
            let expected = (0..<10).map { duration - tick * $0 }
            c.expect(ticks.map(\.event.remaining) == expected,
                     "a tick-counting backend ticked \(ticks.map(\.event.remaining)), not \(expected)")
        } else {
            c.expect((2...10).contains(ticks.count), "\(ticks.count) ticks for ten intervals: \(ticks.map(\.event.remaining))")
        }
    }

    static func finish(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(100))
        let whole = h.recorder(), partial = h.recorder()
        let before = SystemClocks.monotonic()
        try h.scheduler.start(key: "whole", duration: .milliseconds(300), observer: whole.observer)
        // Not a whole number of ticks: the last interval is shorter, and still not early.
        try h.scheduler.start(key: "partial", duration: .milliseconds(250), observer: partial.observer)
        let finished = whole.waitForFinish() && partial.waitForFinish()
        guard c.expect(finished, "no finish within 10 s of 300 ms and 250 ms countdowns") else { return }
        settle(.milliseconds(300))  // three ticks of silence: a second finish or a late tick would show
        h.queue.drain()
        var errors: [String] = []
        for (key, log, ms) in [("whole", whole, 300), ("partial", partial, 250)] {
            EventRules.wellFormed(log.all, key, in: c)
            EventRules.neverEarly(log.ticks, duration: .milliseconds(ms), start: before, key, in: c)
            c.expect(log.finishes.count == 1, "\(key): \(log.finishes.count) finishes")
            if let finish = log.finishes.first {
                let deadline = before + UInt64(ms) * 1_000_000
                c.expect(finish.at + granularity >= deadline,
                         "\(key): finished \(DurationText.nanoseconds(Double(deadline - finish.at))) before the deadline")
                errors.append("\(key) \(DurationText.nanoseconds(Double(Int64(finish.at) - Int64(deadline))))")
            }
            c.expect(h.scheduler.remaining(key: key) == nil, "\(key): remaining(key:) is not nil after the finish")
        }
        c.figure("finish after the deadline by at most: " + errors.joined(separator: ", "))
        c.expect(partial.ticks.count <= 3, "partial: \(partial.ticks.count) ticks for a 250 ms countdown of 100 ms ticks")
        c.expect(h.scheduler.activeCount == 0, "activeCount is \(h.scheduler.activeCount) after both finished")
        let again = h.recorder()
        let outcome = try h.scheduler.start(key: "whole", duration: .seconds(5), observer: again.observer)
        c.expect(outcome == .started, "start on a finished key returned \(outcome)")
    }

    static func attach(_ c: CheckContext) throws {
        let tick = Duration.milliseconds(20), duration = Duration.seconds(4)
        let h = try c.makeScheduler(tick: tick)
        let old = h.recorder(), new = h.recorder()
        let before = SystemClocks.monotonic()
        try h.scheduler.start(key: "sms", duration: duration, observer: old.observer)
        // Counted, not slept: the first tick and 24 more mean at least 24 ticks have passed.
        guard c.expect(old.wait { $0.count >= 25 }, "fewer than 25 ticks in 10 s at a 20 ms tick") else { return }
        // On the delivery queue nothing of the old observer's can be in flight.
        let (outcome, oldCount, attachedAt) = try h.queue.queue.sync {
            let outcome = try h.scheduler.start(key: "sms", duration: duration, observer: new.observer)
            return (outcome, old.count, SystemClocks.monotonic())
        }
        guard case .attached(let remaining) = outcome else {
            c.fail("start on a running key returned \(outcome), not attached")
            return
        }
        c.figure("attached with \(remaining) left after ≥ 24 ticks of a 4 s countdown")
        c.expect(remaining > .zero && remaining <= duration - tick * 24 + .milliseconds(1),
                 "attached with \(remaining); 24 ticks had passed, so at most \(duration - tick * 24) remained")

        // Behind a busy queue: ticks already queued for the replaced observer stay silent.
        let behind = h.recorder(), successor = h.recorder()
        try h.scheduler.start(key: "held", duration: duration, observer: behind.observer)
        _ = behind.wait { $0.count >= 2 }
        let behindCount = try h.queue.holding {
            let count = behind.count
            settle(tick * 3)
            _ = try h.scheduler.start(key: "held", duration: duration, observer: successor.observer)
            return count
        }

        guard c.expect(new.waitForFinish(), "the new observer heard no finish") else { return }
        settle(tick * 3)
        h.queue.drain()
        c.expect(old.count == oldCount, "the replaced observer heard \(old.all.dropFirst(oldCount).map { EventRules.describe($0.event) })")
        c.expect(behind.count == behindCount, "ticks queued before the attach reached the replaced observer")
        c.expect(successor.count >= 1, "the observer attached behind a busy queue heard nothing")
        if let first = new.all.first {
            c.expect(first.event == CountdownEvent(key: "sms", kind: .tick, remaining: remaining),
                     "the attached observer's first event is \(EventRules.describe(first.event)), not tick(\(remaining))")
            c.expect(first.at - attachedAt < 3_000_000_000, "the attach tick came \(DurationText.nanoseconds(Double(first.at - attachedAt))) after the attach")
        }
        EventRules.wellFormed(new.all, "attached", in: c)
        c.expect(new.finishes.count == 1, "the attached observer heard \(new.finishes.count) finishes")
        if let finish = new.finishes.first {
            c.expect(finish.at + granularity >= before + nanoseconds(duration), "finished before the original deadline")
        }
        // Not restarted, not extended: with `remaining` left, at most one tick per interval of
        // it follows the attach tick. (A countdown restarted or extended at the attach would tick
        // for the whole duration again. Counted, not timed: a drifting backend finishes late.)
        let allowed = Int((remaining / tick).rounded(.up)) + 1
        c.expect(new.ticks.count <= allowed,
                 "\(new.ticks.count) ticks after attaching with \(remaining) left: at most \(allowed), unless restarted or extended")
    }

    static func attachOnly(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(20))
        let stray = h.recorder()
        let none = h.scheduler.attach(key: "sms", observer: stray.observer)
        c.expect(none == nil, "attach(key:) on an unknown key returned \(String(describing: none))")
        c.expect(h.scheduler.activeCount == 0, "attach(key:) on an unknown key started a countdown")
        let first = h.recorder(), second = h.recorder()
        try h.scheduler.start(key: "sms", duration: .seconds(3), observer: first.observer)
        _ = first.wait { $0.count >= 5 }
        let (told, firstCount) = h.queue.queue.sync {
            (h.scheduler.attach(key: "sms", observer: second.observer), first.count)
        }
        guard let told else {
            c.fail("attach(key:) on a running countdown returned nil")
            return
        }
        c.expect(told > .zero && told <= .seconds(3) - .milliseconds(80) + .milliseconds(1),
                 "attach(key:) told \(told) after at least four ticks of a 3 s countdown")
        _ = second.wait { $0.count >= 3 }
        h.queue.drain()
        c.expect(second.all.first?.event == CountdownEvent(key: "sms", kind: .tick, remaining: told),
                 "the attached observer's first event is not tick(\(told))")
        c.expect(first.count == firstCount, "the replaced observer kept hearing")
        EventRules.wellFormed(second.all, "attached", in: c)
        settle(.milliseconds(50))
        c.expect(stray.count == 0, "the observer of an attach to nothing was called")
    }

    static func cancel(_ c: CheckContext) throws {
        let tick = Duration.milliseconds(10)
        let h = try c.makeScheduler(tick: tick)
        let s = h.scheduler
        c.expect(s.cancel(key: "nobody") == false, "cancel of an unknown key returned true")

        // From another thread: once cancel returned and the queue drained, silence.
        let fromThread = h.recorder()
        try s.start(key: "a", duration: .seconds(5), observer: fromThread.observer)
        _ = fromThread.wait { $0.count >= 3 }
        c.expect(s.cancel(key: "a"), "cancel of a running countdown returned false")
        h.queue.drain()
        let afterCancel = fromThread.count
        c.expect(s.cancel(key: "a") == false, "a second cancel returned true")
        c.expect(s.remaining(key: "a") == nil, "remaining(key:) is not nil after cancel")

        // On the delivery queue: exact, no draining needed.
        let onQueue = h.recorder()
        try s.start(key: "b", duration: .seconds(5), observer: onQueue.observer)
        _ = onQueue.wait { $0.count >= 3 }
        let (cancelled, atCancel) = h.queue.queue.sync { (s.cancel(key: "b"), onQueue.count) }
        c.expect(cancelled, "cancel on the delivery queue returned false")

        // Behind a busy queue: ticks already queued are silenced by the cancel.
        let queued = h.recorder()
        try s.start(key: "q", duration: .seconds(5), observer: queued.observer)
        _ = queued.wait { $0.count >= 2 }
        let beforeHold = h.queue.holding {
            let count = queued.count
            settle(tick * 6)
            c.expect(s.cancel(key: "q"), "cancel behind a busy queue returned false")
            return count
        }

        // A paused countdown is cancelled too.
        let paused = h.recorder()
        try s.start(key: "c", duration: .seconds(5), observer: paused.observer)
        c.expect(s.pause(key: "c"), "pause returned false")
        c.expect(s.cancel(key: "c"), "cancel of a paused countdown returned false")

        settle(tick * 15)
        h.queue.drain()
        c.expect(fromThread.count == afterCancel, "\(fromThread.count - afterCancel) events after cancel returned (called from another thread)")
        c.expect(onQueue.count == atCancel, "\(onQueue.count - atCancel) events after cancel returned (called on the delivery queue)")
        c.expect(queued.count == beforeHold, "\(queued.count - beforeHold) queued ticks delivered after cancel returned")
        c.expect(fromThread.finishes.isEmpty && onQueue.finishes.isEmpty && paused.finishes.isEmpty,
                 "a cancelled countdown finished")
        c.expect(s.activeCount == 0, "activeCount is \(s.activeCount) after cancelling everything")
    }

    static func pauseResume(_ c: CheckContext) throws {
        let duration = Duration.seconds(2)
        let h = try c.makeScheduler(tick: .milliseconds(20))
        let s = h.scheduler
        let log = h.recorder()
        c.expect(s.pause(key: "k") == false, "pause of an unknown key returned true")
        c.expect(s.resume(key: "k") == false, "resume of an unknown key returned true")
        let before = SystemClocks.monotonic()
        try s.start(key: "k", duration: duration, observer: log.observer)
        c.expect(s.resume(key: "k") == false, "resume of a running countdown returned true")
        _ = log.wait { $0.count >= 10 }
        c.expect(s.pause(key: "k"), "pause of a running countdown returned false")
        let pausedAfter = SystemClocks.monotonic()
        c.expect(s.pause(key: "k") == false, "pause of a paused countdown returned true")
        h.queue.drain()
        let atPause = log.count
        guard let frozen = s.remaining(key: "k") else {
            c.fail("remaining(key:) is nil for a paused countdown")
            return
        }
        settle(.milliseconds(300))
        h.queue.drain()
        c.expect(log.count == atPause, "\(log.count - atPause) events while paused")
        c.expect(s.remaining(key: "k") == frozen, "remaining moved while paused: \(frozen) then \(String(describing: s.remaining(key: "k")))")
        c.expect(s.activeKeys == ["k"], "activeKeys is \(s.activeKeys) while paused")
        let resumedBefore = SystemClocks.monotonic()
        c.expect(s.resume(key: "k"), "resume of a paused countdown returned false")
        c.expect(s.resume(key: "k") == false, "a second resume returned true")
        guard c.expect(log.waitForFinish(), "no finish within 10 s of the resume") else { return }
        settle(.milliseconds(60))
        h.queue.drain()
        EventRules.wellFormed(log.all, "k", in: c)
        let afterResume = Array(log.all.dropFirst(atPause))
        c.expect(afterResume.count >= 2, "no tick after the resume")
        if let first = afterResume.first, first.event.kind == .tick {
            c.expect(first.event.remaining <= frozen, "resumed with \(first.event.remaining), more than the \(frozen) frozen")
        }
        let pausedAtLeast = resumedBefore - pausedAfter
        if let finish = log.finishes.first {
            let deadline = before + nanoseconds(duration) + pausedAtLeast
            c.expect(finish.at + granularity >= deadline,
                     "finished \(DurationText.nanoseconds(Double(deadline - finish.at))) before the deadline moved by the pause")
            c.figure("paused \(DurationText.nanoseconds(Double(pausedAtLeast))); finished \(DurationText.nanoseconds(Double(Int64(finish.at) - Int64(deadline)))) after the moved deadline")
        }
    }

    static func badInput(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(20))
        let s = h.scheduler
        let maximum = s.profile.maximumDuration
        let running = h.recorder(), refused = h.recorder()
        try s.start(key: "running", duration: min(.seconds(5), maximum), observer: running.observer)
        func refuses(_ key: String, _ duration: Duration, _ expected: CountdownError) {
            do {
                let outcome = try s.start(key: key, duration: duration, observer: refused.observer)
                c.fail("start(\"\(key)\", \(duration)) returned \(outcome) instead of throwing \(expected)")
            } catch {
                c.expect(error == expected, "start(\"\(key)\", \(duration)) threw \(error), not \(expected)")
            }
        }
        refuses("", .seconds(1), .emptyKey)
        refuses("zero", .zero, .nonPositiveDuration(.zero))
        refuses("negative", .seconds(-1), .nonPositiveDuration(.seconds(-1)))
        let tooLong = maximum + .seconds(1)
        refuses("long", tooLong, .durationAboveMaximum(tooLong, maximum: maximum))
        // Refused for the running key too: too long is not an attach.
        refuses("running", tooLong, .durationAboveMaximum(tooLong, maximum: maximum))
        _ = running.wait { $0.count >= 3 }
        settle(.milliseconds(60))
        c.expect(running.count >= 3, "the running countdown stopped ticking after refused starts")
        c.expect(refused.count == 0, "the observer of a refused start was called \(refused.count) times")
        c.expect(s.activeKeys == ["running"], "activeKeys is \(s.activeKeys) after refused starts")

        // A tick interval that is not positive is refused when the scheduler is made.
        for bad in [Duration.zero, .milliseconds(-5)] {
            do {
                _ = try c.makeScheduler(tick: bad)
                c.fail("a scheduler was made with a tick interval of \(bad)")
            } catch let error as CountdownError {
                c.expect(error == .nonPositiveTickInterval(bad), "tick interval \(bad): threw \(error)")
            } catch {
                c.fail("tick interval \(bad): threw \(error), not a CountdownError")
            }
        }
    }

    static func reentrancy(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(15))
        let s = h.scheduler
        let results = Locked<[String]>([])
        let inner = h.recorder()
        try s.start(key: "outer", duration: .seconds(5)) { event in
            guard event.kind == .tick, event.remaining < .seconds(5) else { return }
            // The second tick exercises every method from inside the callback.
            _ = s.remaining(key: "outer")
            _ = s.activeKeys
            _ = s.activeCount
            let paused = s.pause(key: "outer"), resumed = s.resume(key: "outer")
            _ = try? s.start(key: "outer", duration: .seconds(5)) { _ in }  // an attach
            _ = s.attach(key: "outer") { _ in }
            _ = try? s.start(key: "inner", duration: .milliseconds(60), observer: inner.observer)
            let cancelled = s.cancel(key: "outer")
            results.withLock { $0.append("pause=\(paused) resume=\(resumed) cancel=\(cancelled)") }
        }
        guard c.expect(waitUntil { !results.withLock { $0 }.isEmpty },
                       "the callback that called back into the scheduler never returned (deadlock?)")
        else { return }
        c.expect(results.withLock { $0 } == ["pause=true resume=true cancel=true"],
                 "from a callback: \(results.withLock { $0 })")
        c.expect(inner.waitForFinish(), "a countdown started from a callback never finished")
        c.expect(waitUntil { s.activeCount == 0 }, "\(s.activeCount) countdowns left")
    }

    static func concurrency(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(5))
        let s = h.scheduler
        let keys = (0..<16).map { "key\($0)" }
        let logs = Locked<[Recorder]>([])
        let threads = 8, perThread = 150
        let started = SystemClocks.monotonic()
        onThreads(threads) { thread in
            var random = SplitMix(seed: c.options.seed &+ UInt64(thread))
            for _ in 0..<perThread {
                let key = keys[random.below(keys.count)]
                switch random.below(6) {
                case 0, 1:
                    let log = h.recorder()
                    logs.withLock { $0.append(log) }
                    _ = try? s.start(key: key, duration: .milliseconds(10 + Int64(random.below(60))), observer: log.observer)
                case 2: _ = s.cancel(key: key)
                case 3: _ = s.pause(key: key)
                case 4: _ = s.resume(key: key)
                default: _ = s.remaining(key: key)
                }
            }
        }
        let elapsed = SystemClocks.monotonic() - started
        for key in keys { _ = s.resume(key: key) }
        c.expect(waitUntil(timeout: .seconds(20)) { s.activeCount == 0 }, "\(s.activeCount) countdowns never finished")
        h.queue.drain()
        let all = logs.withLock { $0 }
        for (i, log) in all.enumerated() { EventRules.wellFormed(log.all, "observer \(i)", in: c) }
        c.expect(all.contains { !$0.finishes.isEmpty }, "no countdown finished")
        c.figure("\(threads * perThread) calls from \(threads) threads in \(DurationText.nanoseconds(Double(elapsed)))")
    }

    static func delivery(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(5))
        let logs = (0..<20).map { _ in h.recorder() }
        for (i, log) in logs.enumerated() {
            try h.scheduler.start(key: "k\(i)", duration: .milliseconds(150 + 10 * Int64(i)), observer: log.observer)
        }
        c.expect(waitUntil { logs.allSatisfy { !$0.finishes.isEmpty } }, "not every countdown finished")
        h.queue.drain()
        let records = logs.flatMap(\.all)
        let off = records.filter { !$0.onDeliveryQueue }.count
        c.expect(off == 0, "\(off) of \(records.count) callbacks ran off the delivery queue")
        c.expect(h.queue.overlaps == 0, "\(h.queue.overlaps) callbacks began while another was running")
        c.figure("\(records.count) callbacks from 20 countdowns")
    }

    static func observerRelease(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(10))
        let s = h.scheduler
        let finished = Locked(false)
        let finishing = try startWatched(s, key: "finish", duration: .milliseconds(40)) { finished.withLock { $0 = true } }
        let cancelled = try startWatched(s, key: "cancel", duration: .seconds(5))
        let replaced = try startWatched(s, key: "replace", duration: .seconds(5))
        c.expect(finishing.isAlive && cancelled.isAlive && replaced.isAlive, "observers were released while in use")
        c.expect(waitUntil { finished.withLock { $0 } }, "the 40 ms countdown never finished")
        c.expect(s.cancel(key: "cancel"), "cancel returned false")
        let replacement = try startWatched(s, key: "replace", duration: .seconds(5))
        h.queue.drain()
        c.expect(waitUntil(timeout: .seconds(3)) { !finishing.isAlive }, "the observer of a finished countdown is still referenced")
        c.expect(waitUntil(timeout: .seconds(3)) { !cancelled.isAlive }, "the observer of a cancelled countdown is still referenced")
        c.expect(waitUntil(timeout: .seconds(3)) { !replaced.isAlive }, "a replaced observer is still referenced")
        c.expect(replacement.isAlive, "the current observer was released")
    }

    static func shutdown(_ c: CheckContext) throws {
        // Threads that appear while this scheduler is made and first used are its own. Named
        // apart, this thread passes its name to threads the backend starts and does not name.
        nameCurrentThread("cf-shutdown")
        var harness: Harness?
        var ownThreads: Set<Int> = []
        try OSThreads.creation.withLock { _ throws in
            let before = OSThreads.current()
            harness = try c.makeSchedulerUnlocked(tick: .milliseconds(10))
            ownThreads = OSThreads.started(since: before)
        }
        guard harness != nil else { return }
        let released = try exerciseShutdown(harness!, in: c)
        // Released, the scheduler must go away and take the threads it started with it.
        c.release(harness!.scheduler)
        harness = nil
        c.expect(waitUntil(timeout: .seconds(3)) { !released.isAlive },
                 "the scheduler is still referenced after shutdown and release")
        let leftover = OSThreads.waitForExit(ownThreads, timeout: .seconds(5))
        c.expect(leftover.isEmpty,
                 "threads the scheduler started still run 5 s after shutdown: \(leftover.joined(separator: ", "))")
        if OSThreads.current() == nil {
            c.figure("threads not observable here (no /proc): only the release of the scheduler was checked")
        } else {
            c.figure("\(ownThreads.count) thread(s) of its own, \(leftover.count) left after shutdown")
        }
    }

    /// Shuts `h` down with countdowns running, paused and queued; returns a weak reference to it.
    private static func exerciseShutdown(_ h: Harness, in c: CheckContext) throws -> WeakScheduler {
        let logs = (0..<5).map { _ in h.recorder() }
        for (i, log) in logs.enumerated() {
            try h.scheduler.start(key: "k\(i)", duration: .seconds(5), observer: log.observer)
        }
        c.expect(h.scheduler.pause(key: "k0"), "pause returned false")
        _ = logs[1].wait { $0.count >= 3 }
        let counts = h.queue.holding {
            let counts = logs.map(\.count)
            settle(.milliseconds(50))  // ticks queue up behind the hold
            h.scheduler.shutdown()
            return counts
        }
        h.scheduler.shutdown()  // idempotent
        c.expect(h.scheduler.activeCount == 0, "activeCount is \(h.scheduler.activeCount) after shutdown")
        do {
            let outcome = try h.scheduler.start(key: "late", duration: .seconds(1)) { _ in }
            c.fail("start after shutdown returned \(outcome)")
        } catch {
            c.expect(error == .shutDown, "start after shutdown threw \(error), not shutDown")
        }
        settle(.milliseconds(100))
        h.queue.drain()
        c.expect(logs.map(\.count) == counts, "events after shutdown: \(zip(logs.map(\.count), counts).map { $0 - $1 })")
        c.expect(logs.allSatisfy { $0.finishes.isEmpty }, "a countdown finished after shutdown")
        return WeakScheduler(h.scheduler)
    }

    /// Starts a countdown whose observer is the only holder of a token the check can watch.
    private static func startWatched(
        _ s: any CountdownScheduler, key: String, duration: Duration, onFinish: (@Sendable () -> Void)? = nil
    ) throws -> Watched {
        let token = Token()
        try s.start(key: key, duration: duration) { event in
            _ = token
            if event.kind == .finished { onFinish?() }
        }
        return Watched(token)
    }
}

final class Token: Sendable {}

/// `@unchecked Sendable`: set once before it is shared; Swift's weak loads are thread-safe.
final class Watched: @unchecked Sendable {
    weak var token: Token?
    init(_ token: Token) { self.token = token }
    var isAlive: Bool { token != nil }
}

/// `@unchecked Sendable`: set once before it is shared; Swift's weak loads are thread-safe.
final class WeakScheduler: @unchecked Sendable {
    weak var scheduler: (any CountdownScheduler)?
    init(_ scheduler: any CountdownScheduler) { self.scheduler = scheduler }
    var isAlive: Bool { scheduler != nil }
}
