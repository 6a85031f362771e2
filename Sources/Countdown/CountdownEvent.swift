/// What a scheduler tells a countdown's observer.
///
/// A countdown's observer hears, in this order: one ``Kind/tick`` at once when it starts
/// (or attaches), one ``Kind/tick`` per tick interval while time remains, and exactly one
/// ``Kind/finished`` (with ``remaining`` zero) at or after the deadline.
public struct CountdownEvent: Sendable, Hashable {
    /// Which event: a tick while time remains, or the one finish.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Time remains; ``CountdownEvent/remaining`` is positive.
        case tick
        /// The deadline has passed; the key is free again. Delivered once, and last.
        case finished
    }

    /// The countdown's key, so one observer can serve many keys (a list of cells).
    public let key: String
    /// A tick, or the finish.
    public let kind: Kind
    /// Time left when the event was produced: positive for a tick, zero when finished.
    public let remaining: Duration

    /// The remaining time in whole seconds, rounded up: what a "Retry in 42 s" button shows,
    /// so it never reads 0 while it is still disabled.
    public var wholeSecondsRemaining: Int64 {
        let (seconds, attoseconds) = remaining.components
        return attoseconds > 0 ? seconds + 1 : seconds
    }

    /// An event for `key` of `kind`, carrying `remaining`, as a scheduler delivers it: for a
    /// backend of your own, or a test's observer.
    public init(key: String, kind: Kind, remaining: Duration) {
        self.key = key
        self.kind = kind
        self.remaining = remaining
    }

    static func tick(_ key: String, _ remaining: Duration) -> CountdownEvent {
        CountdownEvent(key: key, kind: .tick, remaining: remaining)
    }

    static func finished(_ key: String) -> CountdownEvent {
        CountdownEvent(key: key, kind: .finished, remaining: .zero)
    }
}

/// Receives a countdown's events, on the scheduler's delivery queue.
///
/// The closure may call back into the scheduler (start, cancel, pause, resume, query).
/// The scheduler drops its reference to it when the countdown finishes, is cancelled,
/// or another observer attaches to the key.
public typealias CountdownObserver = @Sendable (CountdownEvent) -> Void
