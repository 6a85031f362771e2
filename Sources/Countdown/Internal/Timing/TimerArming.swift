/// What the ticker's thread sleeps until, as a value, decided under the ticker's lock.
///
/// The thread reads the decision itself, under the same lock, each time it wakes up: a
/// decision cannot be overwritten by an older one on its way to a timer, so there is nothing
/// to number or arm again. A decision for an earlier instant than the one slept for asks the
/// caller to wake the thread (after releasing the lock), which then sleeps for the new one.
struct TimerArming {
    /// The instant the thread sleeps until; nil when nothing is due.
    private(set) var armedFor: MonotonicInstant?

    /// Arms for `instant` unless something at or before it is armed already; true when the
    /// thread must be woken to sleep for it instead.
    mutating func arm(ifEarlier instant: MonotonicInstant) -> Bool {
        if let armedFor, armedFor <= instant { return false }
        armedFor = instant
        return true
    }

    /// The thread woke for the armed instant and takes what is due: nothing is armed until
    /// the wake-up decides again.
    mutating func fired() {
        armedFor = nil
    }
}
