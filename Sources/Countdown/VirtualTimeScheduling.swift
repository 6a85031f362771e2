/// A scheduler whose clock moves only when it is told to: what a test drives, so that a
/// "Retry in 60 s" screen is tested in milliseconds, and what the conformance suite judges in
/// virtual time.
///
/// ## Implementation requirements
///
/// Besides everything ``CountdownScheduler`` requires, measured on this clock:
///
/// 1. **The clock moves only by `advance`.** ``now`` does not change between calls of
///    ``advance(by:)``, and no tick or finish is decided because real time passed.
/// 2. **Everything due is delivered before `advance` returns.** Every tick and finish due in
///    the interval runs, in deadline order, and `advance` returns once their observer calls
///    have run on the delivery queue, including events decided since the previous call (a
///    start's first tick). While an event is delivered, ``now`` reads the instant it was due
///    at, so an observer that calls back into the scheduler acts at that instant.
/// 3. **Same calls, same events.** Two runs that make the same calls from one thread deliver
///    the same events in the same order.
/// 4. **Refuse, change nothing.** A negative interval, or an `advance` started while another
///    one is under way (from an observer, or from another thread), throws and moves nothing.
public protocol VirtualTimeScheduling: CountdownScheduler {
    /// The time on this scheduler's clock: how far it was advanced since its origin.
    var now: Duration { get }

    /// Moves the clock forward by `duration`, delivering every tick and finish due on the way.
    /// `.zero` delivers what was already decided without moving the clock.
    func advance(by duration: Duration) throws
}
