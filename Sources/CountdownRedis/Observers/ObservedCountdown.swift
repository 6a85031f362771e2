#if Redis
/// One countdown of the fleet, as observed in this process. `generation` names it fleet-wide: a
/// new countdown under the same key is another generation.
struct ObservedCountdown {
    /// Where it stands.
    enum Phase: Sendable, Equatable {
        /// Counting down to `deadline`, an instant of ``SystemClocks/monotonic()``.
        case running(deadline: Int64)
        /// Frozen with `remaining` nanoseconds left.
        case paused(remaining: Int64)
    }

    let key: String
    let generation: Int64
    /// The token the server knows this observer by (`member/serial`): what every message
    /// about it is addressed to.
    let token: String
    /// Its place among the countdown's observers, as the server saw them attach (0: the
    /// starter's): orders two calls of this process that the server answered out of order.
    let attachSerial: Int64
    let observer: FleetObserver
    let duration: Int64
    var phase: Phase
    /// The server's count of the countdown's pauses and resumes that `phase` reflects: a notice
    /// of an earlier one, read late from another connection, changes nothing.
    var change: Int64
    /// The epoch of the observer's gate: moved by every pause, so that a tick decided before
    /// one is not delivered after it.
    var epoch: UInt64 = 0
    /// The least remaining time told so far: a tick never tells more.
    var leastTold: Int64
    /// How much earlier than `deadline` the countdown may end at the server: a deadline is placed
    /// here from when its answer was read, which can be a round trip after the server read its
    /// clock (under load, tens of milliseconds). What an expiry heard is matched against
    /// (``ObserverRegistry/finishExpired(key:slack:now:into:)``).
    var lead: Int64 = 0
    /// The instant of the next tick filed, nil while paused or when no tick is left.
    var nextTick: Int64?
}
#endif
