/// When the ticker wants waking next, as a value, decided under the ticker's lock. It arms no
/// timer: the runtime's timer reads it (``Ticker/nextWakeUp``) each time it looks again.
///
/// The timer reads the decision itself, under the same lock, each time it wakes up: a decision
/// cannot be overwritten by an older one on its way to a timer, so there is nothing to number
/// or set again. A decision for an earlier instant than the one slept for asks the caller to
/// nudge the timer (after releasing the lock), which then sleeps for the new one.
struct NextWakeUp {
    /// The instant the timer sleeps until; nil when nothing is due.
    private(set) var instant: MonotonicInstant?

    /// Moves the wake-up to `instant` unless one at or before it is decided already; true when
    /// the timer must be nudged to sleep for it instead.
    mutating func moveEarlier(to instant: MonotonicInstant) -> Bool {
        if let current = self.instant, current <= instant { return false }
        self.instant = instant
        return true
    }

    /// The timer woke for the instant and the ticker takes what is due: nothing is decided
    /// until the wake-up decides again.
    mutating func woke() {
        instant = nil
    }
}
