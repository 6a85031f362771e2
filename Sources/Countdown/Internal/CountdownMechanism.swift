/// Identifies one arming of one countdown. `serial` is new for every countdown started;
/// `arm` is new every time its timer is armed (start, resume), so a fire from a timer that
/// was disarmed (paused, cancelled, replaced by a new countdown under the same key) is
/// recognised as stale and ignored.
struct CountdownID: Hashable, Sendable {
    let key: String
    let serial: UInt64
    let arm: UInt64
}

/// A backend's timing mechanism: the only part that differs between strategies. The shared
/// ``KeyedCountdowns`` does the bookkeeping and calls these hooks **with its lock held**, so
/// a hook must not block and must not call back into the table synchronously.
protocol CountdownMechanism: Sendable {
    associatedtype Progress: CountdownProgress
    /// What the mechanism keeps per countdown (a timer, a worker).
    associatedtype Handle

    func makeProgress(duration: Duration, now: MonotonicInstant) -> Progress

    /// Called once, when the table is made: for a mechanism that drives every countdown from
    /// one place and needs the table itself, not per countdown.
    func bind(to table: KeyedCountdowns<Self>)

    /// Arrange for the table to be told when `firstFire` comes, and after that at every tick,
    /// until ``disarm(_:)``.
    func arm(_ id: CountdownID, firstFire: MonotonicInstant, table: KeyedCountdowns<Self>) -> Handle

    /// The countdown ended (finished, cancelled, shut down): release what `arm` made.
    func disarm(_ handle: Handle)

    /// Pausing; returns the handle to keep while paused, or nil when the mechanism disarmed.
    func pause(_ handle: Handle) -> Handle?

    /// Resuming; `handle` is what ``pause(_:)`` returned.
    func resume(_ handle: Handle?, id: CountdownID, firstFire: MonotonicInstant,
                table: KeyedCountdowns<Self>) -> Handle

    /// The next interval is shorter than a tick: move the next fire to `nextFire`.
    func shorten(_ handle: Handle, nextFire: MonotonicInstant)

    /// Called once, after every countdown has been retired: end the mechanism's threads.
    func shutdown()
    /// Whether ``shutdown()`` needs each countdown disarmed first. A mechanism whose shutdown
    /// takes every timer down at once says false, and is spared N disarms (the run loop's cost
    /// O(N) each).
    var disarmsEachOnShutdown: Bool { get }
}

extension CountdownMechanism {
    func bind(to table: KeyedCountdowns<Self>) {}

    /// By default pausing stops the timer, and resuming arms a new one.
    func pause(_ handle: Handle) -> Handle? {
        disarm(handle)
        return nil
    }

    func resume(_ handle: Handle?, id: CountdownID, firstFire: MonotonicInstant,
                table: KeyedCountdowns<Self>) -> Handle {
        arm(id, firstFire: firstFire, table: table)
    }

    func shorten(_ handle: Handle, nextFire: MonotonicInstant) {}

    func shutdown() {}
    var disarmsEachOnShutdown: Bool { true }
}
