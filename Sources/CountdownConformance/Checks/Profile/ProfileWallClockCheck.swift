import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `profile.wall-clock` check: an hour's change of the wall clock moves the countdown exactly when the backend declares it.
enum ProfileWallClockCheck {
    static let check = ConformanceCheck(
        "profile.wall-clock", .profile,
        "an hour's change of the wall clock moves the countdown exactly when the backend declares it",
        needsRealWorld: "it moves the wall clock under real timers",
        body: run)

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(20))
        let declared = h.scheduler.profile.wallClockJump
        let duration = min(.seconds(60), h.scheduler.profile.maximumDuration)

        let forward = h.recorder()
        try h.scheduler.start(key: "forward", duration: duration, observer: forward.observer)
        _ = forward.wait { $0.count >= 3 }
        let jumpedAt = h.now()
        h.wallClock.move(by: .seconds(3600))
        let moved = forward.waitForFinish(timeout: .seconds(2))
        h.wallClock.move(by: .seconds(-3600))
        let observed: CountdownProfile.WallClockJump = moved ? .movesCountdown : .immune
        if moved, let finish = forward.finishes.first {
            c.figure("an hour forward: finished \(DurationText.nanoseconds(Double(finish.at - jumpedAt))) later, \(duration) early")
        } else {
            c.figure("an hour forward: still running 2 s later")
        }
        c.expect(observed == declared, "declares \(declared.rawValue), but observed \(observed.rawValue)")

        // Set back: whatever the profile, a countdown never counts up.
        let back = h.recorder()
        try h.scheduler.start(key: "back", duration: duration, observer: back.observer)
        _ = back.wait { $0.count >= 3 }
        let before = back.count
        h.wallClock.move(by: .seconds(-3600))
        c.expect(back.wait(timeout: .seconds(5)) { $0.count >= before + 10 } || declared == .movesCountdown,
                 "ticks stopped after the wall clock was set back, though declared immune")
        h.wallClock.move(by: .seconds(3600))
        h.drain()
        EventRules.wellFormed(back.all, "set back", in: c)
    }
}
