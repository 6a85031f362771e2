import Countdown
import CountdownSupport

/// One countdown as the model knows it.
final class CountdownModel {
    let startBegin: UInt64
    let duration: Duration
    /// Lower bound of the time spent paused: from each pause's return to the resume's call.
    var pausedAtLeast: UInt64 = 0
    var pausedSince: UInt64?
    var frozenRemaining: Duration?
    /// Set when the model lost track of its timing (after an answer the contract forbids).
    var timingUnknown = false

    /// What "never before" allows (``ClockAllowance``): nothing in virtual time.
    let allowance: UInt64

    init(startBegin: UInt64, duration: Duration, allowance: UInt64) {
        self.startBegin = startBegin
        self.duration = duration
        self.allowance = allowance
    }

    var isPaused: Bool { pausedSince != nil }

    /// Never before this may it have finished.
    var earliestFinish: UInt64 { startBegin + nanoseconds(duration) + pausedAtLeast }

    /// For failure messages: where the model stood.
    func explain(at now: UInt64) -> String {
        let left = Int64(earliestFinish) - Int64(now)
        return "started \(DurationText.nanoseconds(Double(now - startBegin))) before for \(duration), paused at least \(DurationText.nanoseconds(Double(pausedAtLeast)))"
            + (isPaused ? ", paused now" : ", \(DurationText.nanoseconds(Double(left))) before its earliest finish")
    }

    /// Could it have finished by `now`? Only if running and past its earliest finish.
    func mayHaveFinished(at now: UInt64) -> Bool {
        timingUnknown || (!isPaused && now + allowance >= earliestFinish)
    }
}
