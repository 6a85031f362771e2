import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `attach` check: start on a running key: observer replaced (the old one silent), no restart, no extension.
enum AttachCheck {
    static let check = ConformanceCheck(
        "attach", .contract,
        "start on a running key: observer replaced (the old one silent), no restart, no extension; a paused one stays paused",
        body: run)

    static func run(_ c: CheckContext) throws {
        let tick = Duration.milliseconds(20), duration = Duration.seconds(4)
        let h = try c.makeScheduler(tick: tick)
        let old = h.recorder(), new = h.recorder()
        let before = h.now()
        try h.scheduler.start(key: "sms", duration: duration, observer: old.observer)
        // Counted, not slept: the first tick and 24 more mean at least 24 ticks have passed.
        guard c.expect(old.wait { $0.count >= 25 }, "fewer than 25 ticks in 10 s at a 20 ms tick") else { return }
        // On the delivery queue nothing of the old observer's can be in flight.
        let (outcome, oldCount, attachedAt) = try h.queue.queue.sync {
            let outcome = try h.scheduler.start(key: "sms", duration: duration, observer: new.observer)
            return (outcome, old.count, h.now())
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
        let behindCount = try h.holding {
            let count = behind.count
            h.settle(tick * 3)
            _ = try h.scheduler.start(key: "held", duration: duration, observer: successor.observer)
            return count
        }

        guard c.expect(new.waitForFinish(), "the new observer heard no finish") else { return }
        h.settle(tick * 3)
        h.drain()
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
            c.expect(finish.at + c.granularity >= before + nanoseconds(duration), "finished before the original deadline")
        }
        // Not restarted, not extended: with `remaining` left, at most one tick per interval of
        // it follows the attach tick. (A countdown restarted or extended at the attach would tick
        // for the whole duration again. Counted, not timed: a drifting backend finishes late.)
        let allowed = Int((remaining / tick).rounded(.up)) + 1
        c.expect(new.ticks.count <= allowed,
                 "\(new.ticks.count) ticks after attaching with \(remaining) left: at most \(allowed), unless restarted or extended")

        // start on a paused key attaches to it as it is: told the frozen remaining, still paused.
        let paused = h.recorder(), attached = h.recorder()
        try h.scheduler.start(key: "paused", duration: h.longCountdown, observer: paused.observer)
        guard c.expect(paused.wait { $0.count >= 3 }, "fewer than 3 events in 10 s at a 20 ms tick") else { return }
        c.expect(h.scheduler.pause(key: "paused"), "pause returned false")
        h.drain()
        if let frozen = h.scheduler.remaining(key: "paused") {
            let onPaused = try h.scheduler.start(key: "paused", duration: h.longCountdown, observer: attached.observer)
            c.expect(onPaused == .attached(remaining: frozen), "start on a paused key returned \(onPaused), not attached(\(frozen))")
            h.settle(tick * 5)
            h.drain()
            let later = h.scheduler.remaining(key: "paused")
            c.expect(later == frozen, "start on a paused key resumed it: remaining went from \(frozen) to \(String(describing: later))")
            c.expect(attached.count == 1, "the observer attached to a paused countdown heard \(attached.count) events in 5 ticks, not the one attach tick")
        } else {
            c.fail("remaining(key:) is nil for a paused countdown")
        }
    }
}
