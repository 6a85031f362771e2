import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `pause-resume` check: pause freezes remaining and ticks; resume continues; the deadline moves by the pause.
enum PauseResumeCheck {
    static let check = ConformanceCheck(
        "pause-resume", .contract,
        "pause freezes remaining and ticks; resume continues; the deadline moves by the pause",
        body: run)

    static func run(_ c: CheckContext) throws {
        let duration = Duration.seconds(2)
        let h = try c.makeScheduler(tick: .milliseconds(20))
        let s = h.scheduler
        let log = h.recorder()
        c.expect(s.pause(key: "k") == false, "pause of an unknown key returned true")
        c.expect(s.resume(key: "k") == false, "resume of an unknown key returned true")
        let before = h.now()
        try s.start(key: "k", duration: duration, observer: log.observer)
        c.expect(s.resume(key: "k") == false, "resume of a running countdown returned true")
        _ = log.wait { $0.count >= 10 }
        c.expect(s.pause(key: "k"), "pause of a running countdown returned false")
        let pausedAfter = h.now()
        c.expect(s.pause(key: "k") == false, "pause of a paused countdown returned true")
        h.drain()
        let atPause = log.count
        guard let frozen = s.remaining(key: "k") else {
            c.fail("remaining(key:) is nil for a paused countdown")
            return
        }
        h.settle(.milliseconds(300))
        h.drain()
        c.expect(log.count == atPause, "\(log.count - atPause) events while paused")
        let stillFrozen = s.remaining(key: "k")
        c.expect(stillFrozen == frozen, "remaining moved while paused: \(frozen) then \(String(describing: stillFrozen))")
        let keysWhilePaused = s.activeKeys
        c.expect(keysWhilePaused == ["k"], "activeKeys is \(keysWhilePaused) while paused")
        let resumedBefore = h.now()
        c.expect(s.resume(key: "k"), "resume of a paused countdown returned false")
        c.expect(s.resume(key: "k") == false, "a second resume returned true")
        guard c.expect(log.waitForFinish(), "no finish within 10 s of the resume") else { return }
        h.settle(.milliseconds(60))
        h.drain()
        EventRules.wellFormed(log.all, "k", in: c)
        let afterResume = Array(log.all.dropFirst(atPause))
        c.expect(afterResume.count >= 2, "no tick after the resume")
        if let first = afterResume.first, first.event.kind == .tick {
            c.expect(first.event.remaining <= frozen, "resumed with \(first.event.remaining), more than the \(frozen) frozen")
        }
        let pausedAtLeast = resumedBefore - pausedAfter
        if let finish = log.finishes.first {
            let deadline = before + nanoseconds(duration) + pausedAtLeast
            c.expect(finish.at + c.granularity >= deadline,
                     "finished \(DurationText.nanoseconds(Double(deadline - finish.at))) before the deadline moved by the pause")
            c.figure("paused \(DurationText.nanoseconds(Double(pausedAtLeast))); finished \(DurationText.nanoseconds(Double(Int64(finish.at) - Int64(deadline)))) after the moved deadline")
        }
    }
}
