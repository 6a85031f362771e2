/// What a wake-up timer of the runtime wakes (the timestamp strategy's ``Ticker``): it decides,
/// under its own lock, when it wants waking next; the runtime sleeps until then and runs the
/// wake-up on the delivery queue (``EngineRuntime/startWakeUps(_:for:named:)``).
protocol WakeUpTarget: AnyObject, Sendable {
    /// When the next wake-up is due, read each time the timer looks again.
    var nextWakeUp: WakeUpRequest { get }
    /// One wake-up, on the delivery queue.
    func wakeUp()
}

/// When a ``WakeUpTarget`` wants waking: kinds, not an optional and a flag.
enum WakeUpRequest: Equatable, Sendable {
    /// At this instant on the runtime's monotonic clock (at once if it has passed).
    case at(MonotonicInstant)
    /// Nothing is due: sleep until nudged.
    case idle
    /// Never again: the timer ends.
    case stopped
}
