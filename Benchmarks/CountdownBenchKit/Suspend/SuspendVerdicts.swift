import Countdown
import Foundation

extension SuspendExperiment {
    /// What the profile promises, checked with one-sided bounds and a tolerance of two ticks
    /// (plus 100 ms for a loaded machine): a tick-counting backend loses the frozen time
    /// (finishes at least freeze − 2T late); a deadline backend does not (finishes within the
    /// tolerance of its deadline, or of the continue when the deadline passed in the freeze),
    /// with at most one catch-up tick. Paused through the freeze, nobody finishes early and a
    /// deadline backend finishes on its moved deadline. Nobody loses or doubles a finish.
    static func verdict(
        profile: CountdownProfile?, scenario: Scenario, tickMs: Double, durationMs: Double, finishErrors: [Double],
        afterContinue: [Double], burst: Int, lost: Int, doubled: Int
    ) -> (Bool, String) {
        if scenario.kill != nil {
            return killVerdict(profile: profile, tickMs: tickMs, finishErrors: finishErrors, lost: lost, doubled: doubled)
        }
        if let jump = scenario.clockJumpSeconds {
            return clockVerdict(profile: profile, jump: jump, durationMs: durationMs, after: scenario.freezeAfterMs,
                                finishErrors: finishErrors, tolerance: 2 * tickMs + 100, unfinished: lost, doubled: doubled)
        }
        if lost > 0 { return (false, "\(lost) finish(es) LOST") }
        if doubled > 0 { return (false, "\(doubled) finish(es) DOUBLED") }
        guard let profile, let worst = finishErrors.max(), let best = finishErrors.min() else { return (false, "no finishes") }
        let tolerance = 2 * tickMs + 100
        let freeze = scenario.freezeMs
        // Told of the background and the foreground, every backend keeps its deadline: a tick
        // counter takes off the frozen time. Its catch-up fire and the foreground's corrected
        // tick may both come before the next grid point: two ticks, not a burst.
        let suspension = scenario.notifiesLifecycle == true ? .keepsDeadline : profile.suspension
        let allowedBurst = scenario.notifiesLifecycle == true ? 2 : 1
        if scenario.pausedResumeAfterMs != nil {
            // Paused, a countdown has nothing to lose to the freeze: a deadline backend finishes
            // on the moved deadline; a tick-counting one is never early (it may be late for
            // reasons of its own: the operation-queue worker waits for a pool thread).
            if best < -50 { return (false, "paused through the freeze, yet finished \(fmt(-best)) ms EARLY") }
            switch profile.suspension {
            case .keepsDeadline where worst > tolerance:
                return (false, "paused through the freeze, yet finished \(fmt(worst)) ms after its moved deadline")
            case .keepsDeadline:
                return (true, "paused through the freeze: finished on the moved deadline (+\(fmt(worst)) ms at most)")
            case .finishesLateByFreeze:
                return (true, "paused through the freeze: finished \(fmt(best))…\(fmt(worst)) ms after the moved deadline")
            }
        }
        switch suspension {
        case .finishesLateByFreeze:
            // Grid points the freeze swallowed beyond the one fire that follows it.
            let expected = max(0, (freeze / tickMs).rounded(.down) - 1) * tickMs
            return best >= expected - tickMs - 50
                ? (true, "lost the freeze: finished \(fmt(best))…\(fmt(worst)) ms late (counts ticks, as declared)")
                : (false, "declares it finishes late by the freeze, but finished only \(fmt(best)) ms late")
        case .keepsDeadline:
            if burst > allowedBurst { return (false, "\(burst) ticks in a burst after the freeze") }
            let passedInFreeze = afterContinue.allSatisfy { $0 >= 0 } && durationMs <= scenario.freezeAfterMs + freeze
            let late = passedInFreeze ? (afterContinue.max() ?? 0) : worst
            let catchUp = burst == 2 ? "a catch-up tick and the foreground's corrected one" : "\(burst) catch-up tick"
            if late <= tolerance && best >= 0 {
                return (true, passedInFreeze
                    ? "deadline passed in the freeze: finished \(fmt(late)) ms after the continue"
                    : "kept its deadline: finished \(fmt(best))…\(fmt(worst)) ms after it, \(catchUp)")
            }
            // Notified, a backend whose drift accumulates may still be late for reasons of its
            // own (an operation-queue worker waiting for a pool thread). Had the notification
            // done nothing, every countdown would have lost the freeze: one on time shows it worked.
            let onTime = passedInFreeze ? (afterContinue.min() ?? late) : best
            if scenario.notifiesLifecycle == true, profile.drift == .accumulates, best >= 0, onTime <= tolerance {
                return (true, "notified, it took off the freeze: finished \(fmt(best))…\(fmt(worst)) ms after its deadline, "
                    + "the later ones late for reasons of their own (drift accumulates, as declared)")
            }
            return (false, "declares it keeps its deadline, but finished \(fmt(worst)) ms after it")
        }
    }

    /// Killed and relaunched from the store: every countdown finishes once, never before its
    /// original deadline, and within one tick after it, or after the restore when its deadline
    /// passed while no process ran (`finishErrors` are measured from the later of the two). A backend whose declared drift
    /// accumulates may be later, for reasons of its own (the operation-queue worker waits for
    /// a pool thread in the relaunched process), and the words say so.
    static func killVerdict(
        profile: CountdownProfile?, tickMs: Double, finishErrors: [Double], lost: Int, doubled: Int
    ) -> (Bool, String) {
        if lost > 0 { return (false, "\(lost) finish(es) LOST") }
        if doubled > 0 { return (false, "\(doubled) finish(es) DOUBLED") }
        guard let best = finishErrors.min(), let worst = finishErrors.max() else { return (false, "no finishes") }
        if best < -1 { return (false, "finished \(fmt(-best)) ms EARLY") }
        if worst <= tickMs {
            return (true, "every countdown came back and finished once, \(fmt(best))…\(fmt(worst)) ms after its original deadline (or its restore)")
        }
        let within = finishErrors.filter { $0 <= tickMs }.count
        return profile?.drift == .accumulates
            ? (true, "came back and finished once, \(fmt(best))…\(fmt(worst)) ms late (\(within) of \(finishErrors.count) within a tick): "
                + "late for reasons of its own, as without a kill (drift accumulates, as declared)")
            : (false, "came back, but finished up to \(fmt(worst)) ms after its original deadline or its restore (\(within) of \(finishErrors.count) within a tick)")
    }

    /// The wall clock set forward: an immune backend is not moved (it does not finish early;
    /// it may be late for reasons of its own, as the operation-queue worker waiting for a pool
    /// thread is); one that follows the wall clock finishes at least half of what remained early.
    static func clockVerdict(
        profile: CountdownProfile?, jump: Double, durationMs: Double, after: Double, finishErrors: [Double],
        tolerance: Double, unfinished: Int, doubled: Int
    ) -> (Bool, String) {
        if doubled > 0 { return (false, "\(doubled) finish(es) DOUBLED") }
        guard let profile else { return (false, "no profile") }
        guard unfinished == 0, let best = finishErrors.min(), let worst = finishErrors.max() else {
            return (false, "\(unfinished) countdown(s) did not finish after the wall clock was set forward")
        }
        switch profile.wallClockJump {
        case .immune:
            return best >= -50
                ? (true, "immune: clock set forward, finished \(fmt(best))…\(fmt(worst)) ms after its deadline")
                : (false, "declares itself immune, but finished \(fmt(-best)) ms early")
        case .movesCountdown:
            let remaining = durationMs - after
            return worst <= -remaining / 2
                ? (true, "moved: clock set forward, finished \(fmt(-worst)) ms early or more")
                : (false, "declares it follows the wall clock, but finished only \(fmt(-worst)) ms early")
        }
    }

    static func fmt(_ value: Double) -> String { String(format: "%.0f", value) }

    static func starts(_ lines: [WorkerProcess.Line]) -> [Int: UInt64] {
        var starts: [Int: UInt64] = [:]
        for line in lines {
            if case let .started(index, at)? = line.message { starts[index] = at }
        }
        return starts
    }
}
