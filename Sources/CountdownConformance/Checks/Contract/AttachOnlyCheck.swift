import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `attach-only` check: attach(key:) attaches to a running countdown and never starts one.
enum AttachOnlyCheck {
    static let check = ConformanceCheck(
        "attach-only", .contract,
        "attach(key:) attaches to a running countdown, never starts one, and leaves a paused one paused",
        body: run)

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(20))
        let stray = h.recorder()
        let none = h.scheduler.attach(key: "sms", observer: stray.observer(for: "attach"))
        c.expect(none == nil, "attach(key:) on an unknown key returned \(String(describing: none))")
        c.expect(h.scheduler.activeCount == 0, "attach(key:) on an unknown key started a countdown")
        let first = h.recorder(), second = h.recorder()
        let duration = h.longCountdown
        try h.scheduler.start(key: "sms", duration: duration, observer: first.observer)
        guard c.expect(first.wait { $0.count >= 5 }, "fewer than 5 events in 10 s at a 20 ms tick") else { return }
        let (told, firstCount) = h.queue.queue.sync {
            (h.scheduler.attach(key: "sms", observer: second.observer(for: "attach")), first.count)
        }
        guard let told else {
            c.fail("attach(key:) on a running countdown returned nil")
            return
        }
        c.expect(told > .zero && told <= duration - .milliseconds(80) + .milliseconds(1),
                 "attach(key:) told \(told) after at least four ticks of a \(duration) countdown")
        _ = second.wait { $0.count >= 3 }
        h.drain()
        c.expect(second.all.first?.event == CountdownEvent(key: "sms", kind: .tick, remaining: told),
                 "the attached observer's first event is not tick(\(told))")
        c.expect(first.count == firstCount, "the replaced observer kept hearing")
        EventRules.wellFormed(second.all, "attached", in: c)
        h.settle(.milliseconds(50))
        c.expect(stray.count == 0, "the observer of an attach to nothing was called")

        // Attached to a paused countdown, attach(key:) tells the frozen remaining and resumes nothing.
        let paused = h.recorder(), watcher = h.recorder()
        try h.scheduler.start(key: "paused", duration: duration, observer: paused.observer)
        guard c.expect(paused.wait { $0.count >= 3 }, "fewer than 3 events in 10 s at a 20 ms tick") else { return }
        c.expect(h.scheduler.pause(key: "paused"), "pause returned false")
        h.drain()
        guard let frozen = h.scheduler.remaining(key: "paused") else {
            c.fail("remaining(key:) is nil for a paused countdown")
            return
        }
        let toldPaused = h.scheduler.attach(key: "paused", observer: watcher.observer(for: "attach"))
        c.expect(toldPaused == frozen, "attach(key:) to a paused countdown told \(String(describing: toldPaused)), not the frozen \(frozen)")
        h.settle(.milliseconds(100))
        h.drain()
        let later = h.scheduler.remaining(key: "paused")
        c.expect(later == frozen, "attach(key:) resumed a paused countdown: remaining went from \(frozen) to \(String(describing: later))")
        c.expect(watcher.count == 1, "the observer attached to a paused countdown heard \(watcher.count) events in 5 ticks, not the one attach tick")
        c.expect(h.scheduler.resume(key: "paused"), "resume after attach(key:) returned false: the countdown was no longer paused")
    }
}
