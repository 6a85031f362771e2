import CountdownSupport
import Countdown

/// The `events` check: `events(key:)` attaches as `attach` does, and ends exactly when the
/// observation does; a consumer that goes away detaches and leaves the countdown running.
enum EventsCheck {
    static let check = ConformanceCheck(
        "events", .contract,
        "events(key:) attaches like attach and ends after the finish, a cancel, a replacement or a shutdown; a consumer that stops or is cancelled leaves the countdown running",
        body: run)

    static func run(_ c: CheckContext) throws {
        let tick = Duration.milliseconds(20)
        let h = try c.makeScheduler(tick: tick)
        let s = h.scheduler

        // No countdown: the stream ends at once and nothing starts.
        let none = StreamConsumer(s.events(key: "none"), time: h.time)
        c.expectEqual(none.waitForEnd(), .ended, "the stream of an unknown key's end")
        c.expectEqual(none.count, 0, "elements of an unknown key's stream")
        c.expectEqual(s.activeCount, 0, "activeCount after events(key:) on an unknown key")

        // Attach: the first element is the remaining time, then ticks, the finish, the end.
        let duration = Duration.seconds(1)
        let replaced = h.recorder()
        let startedAt = h.now()
        try s.start(key: "sms", duration: duration, observer: replaced.observer)
        _ = replaced.wait { $0.count >= 3 }
        let before = s.remaining(key: "sms")
        let attached = StreamConsumer(s.events(key: "sms"), time: h.time)
        let after = s.remaining(key: "sms")
        let replacedCount = h.queue.queue.sync { replaced.count }
        c.expectEqual(attached.waitForEnd(), .ended, "the end of a finishing countdown's stream")
        let heard = attached.all
        EventRules.wellFormed(heard, "events", in: c)
        if let first = heard.first?.event, let before, let after {
            c.expect(first.kind == .tick && first.remaining <= before && first.remaining >= after,
                     "the first element is \(EventRules.describe(first)), not the remaining time (between \(after) and \(before))")
        } else {
            c.fail("the stream of a running countdown was empty, or remaining(key:) was nil around it")
        }
        c.expectEqual(heard.last?.event.kind, .finished, "the last element's kind")
        c.expectEqual(heard.filter { $0.event.kind == .finished }.count, 1, "finishes in the stream")
        if let finish = heard.last, finish.event.kind == .finished {
            c.expect(finish.at + c.granularity >= startedAt + nanoseconds(duration), "the stream's finish came before the deadline")
        }
        h.drain()
        c.expectEqual(replaced.count, replacedCount, "events heard by the observer the stream replaced")

        // A paused countdown: the frozen remaining, and it stays paused.
        try s.start(key: "paused", duration: h.longCountdown, observer: h.ignoring("start"))
        _ = s.pause(key: "paused")
        let frozen = s.remaining(key: "paused")
        let onPaused = StreamConsumer(s.events(key: "paused"), time: h.time)
        c.expect(onPaused.wait(forCount: 1), "the stream of a paused countdown told nothing")
        c.expectEqual(onPaused.all.first?.event.remaining, frozen, "the paused countdown's first element")
        h.settle(tick * 3)
        c.expectEqual(s.remaining(key: "paused"), frozen, "a paused countdown's remaining after events(key:)")
        c.expectEqual(onPaused.count, 1, "elements of a paused countdown's stream in 3 ticks")

        // Cancel, replacement and shutdown each end the stream, with no finish.
        for (key, end) in [("cancelled", "a cancel"), ("replaced", "another observer's attach")] {
            try s.start(key: key, duration: h.longCountdown, observer: h.ignoring("start"))
            let consumer = StreamConsumer(s.events(key: key), time: h.time)
            // Ticks are relayed: a watchdog, not a count in a window, which a stalled machine
            // (a backend skipping ticks to catch up) would miss.
            c.expect(consumer.wait(forCount: 2), "the stream relayed no tick in 10 s (before \(end))")
            if key == "cancelled" { _ = s.cancel(key: key) } else { _ = s.attach(key: key, observer: h.ignoring("attach")) }
            c.expectEqual(consumer.waitForEnd(), .ended, "the stream's end after \(end)")
            c.expect(!consumer.all.contains { $0.event.kind == .finished }, "the stream heard a finish after \(end)")
            EventRules.wellFormed(consumer.all, "events before \(end)", in: c)
        }
        let shutDown = StreamConsumer(s.events(key: "paused"), time: h.time)
        s.shutdown()
        c.expectEqual(shutDown.waitForEnd(), .ended, "the stream's end after shutdown()")
        c.expectEqual(onPaused.waitForEnd(), .ended, "the end of a stream replaced by another stream")

        // A consumer that stops early, or whose task is cancelled, leaves its countdown running:
        // it finishes, and an observer attached afterwards hears the finish. Judged when the
        // consumer went away, and the countdown was looked at, before its deadline: a consumer
        // task may wait seconds for a pool thread (beside a backend that blocks the pool, or on
        // a loaded machine), and then the countdown ran out first, as it should. So a longer
        // one is tried, and a history that still does not fit is reported, not judged.
        let h2 = try c.makeScheduler(tick: tick)
        for (key, how) in [("stops", StreamConsumer.End.stopped), ("cancelled", .cancelled)] {
            let gone = "the countdown was gone after its consumer \(how == .stopped ? "stopped" : "was cancelled")"
            var judged = false
            for length in [Duration.seconds(3), .seconds(12)] where !judged {
                let startedAt = h2.now()
                try h2.scheduler.start(key: key, duration: length, observer: h2.ignoring("start"))
                let consumer = StreamConsumer(h2.scheduler.events(key: key), time: h2.time, stopAfter: how == .stopped ? 3 : nil)
                _ = consumer.wait(forCount: 3)
                if how == .cancelled { consumer.cancel() }
                let end = consumer.waitForEnd()
                h2.settle(tick * 2)
                let left = h2.scheduler.remaining(key: key)
                guard h2.now() < startedAt + nanoseconds(length) else {
                    _ = h2.scheduler.cancel(key: key)
                    continue
                }
                judged = true
                c.expectEqual(end, how, "how the consumer's loop ended")
                c.expect(left != nil, "\(gone), before its deadline")
                let later = h2.recorder()
                if h2.scheduler.attach(key: key, observer: later.observer(for: "attach")) != nil {
                    c.expect(later.waitForFinish(timeout: length + .seconds(10)), "the countdown whose consumer went away never finished")
                }
            }
            if !judged {
                c.inconclusive("a consumer that \(how == .stopped ? "stopped" : "was cancelled") went away after its countdown's deadline, twice (3 s, then 12 s): the machine was too slow to tell")
            }
        }
        c.figure("\(heard.count) elements in the stream of a 1 s countdown at 20 ms ticks")
    }
}
