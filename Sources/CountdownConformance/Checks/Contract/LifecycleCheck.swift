import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `lifecycle` check: the app's background and foreground hooks, with no freeze between
/// them, move nothing the wrong way: the countdown is still there, never finishes early, never
/// counts up; a paused one stays frozen and silent; a foreground with no background first and
/// a second background keep the countdowns as they were.
enum LifecycleCheck {
    static let check = ConformanceCheck(
        "lifecycle", .contract,
        "enteredBackground then enteredForeground: no countdown lost, early or counting up; a paused one stays frozen",
        body: run)

    static func run(_ c: CheckContext) throws {
        let duration = Duration.milliseconds(1500)
        let h = try c.makeScheduler(tick: .milliseconds(50))
        let s = h.scheduler
        let running = h.recorder(), paused = h.recorder()
        s.enteredForeground()  // no background first: nothing to take off
        let before = h.now()
        try s.start(key: "running", duration: duration, observer: running.observer)
        try s.start(key: "paused", duration: .seconds(30), observer: paused.observer)
        c.expect(s.pause(key: "paused"), "pause returned false")
        h.drain()
        let heardWhilePaused = paused.count
        let frozen = s.remaining(key: "paused")
        c.expect(running.wait { $0.count >= 3 }, "no ticks before the background")

        s.enteredBackground()
        h.settle(.milliseconds(300))
        s.enteredBackground()  // a second call keeps the first one's time
        s.enteredForeground()
        s.enteredForeground()  // a second foreground has nothing to take off
        c.expect(s.remaining(key: "running") != nil, "the running countdown is gone after the foreground")
        c.expect(s.activeKeys.sorted() == ["paused", "running"], "activeKeys is \(s.activeKeys.sorted()) after the foreground")
        let stillFrozen = s.remaining(key: "paused")
        c.expect(stillFrozen == frozen, "the paused countdown moved from \(String(describing: frozen)) to \(String(describing: stillFrozen))")

        guard c.expect(running.waitForFinish(), "the running countdown did not finish within 10 s") else { return }
        h.settle(.milliseconds(60))
        h.drain()
        EventRules.wellFormed(running.all, "running", in: c)
        if let finish = running.finishes.first {
            let deadline = before + nanoseconds(duration)
            c.expect(finish.at + c.granularity >= deadline,
                     "finished \(DurationText.nanoseconds(Double(deadline - min(deadline, finish.at)))) before its deadline")
            c.figure("finished \(DurationText.nanoseconds(Double(Int64(finish.at) - Int64(deadline)))) after its deadline")
        }
        c.expect(paused.count == heardWhilePaused, "\(paused.count - heardWhilePaused) events for the paused countdown")
        c.expect(s.remaining(key: "paused") == frozen, "the paused countdown moved after the foreground")
        c.expect(s.resume(key: "paused"), "the paused countdown could not be resumed")
    }
}
