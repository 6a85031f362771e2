/// What ``CountdownScheduler/start(key:duration:observer:)`` did.
public enum CountdownStart: Sendable, Hashable {
    /// No countdown ran under the key: a new one began with the full duration.
    case started
    /// A countdown already ran under the key. It was neither restarted nor extended;
    /// the new observer replaced the old one, and this is its remaining time.
    case attached(remaining: Duration)
}
