/// What ``KeyedCountdownScheduler/restore(from:)`` found in a store and did with it.
public struct CountdownRestoration: Sendable, Hashable {
    /// Countdowns restored running, with the time each had left. Each runs with no observer
    /// until a screen attaches to it by its key.
    public var running: [String: Duration]
    /// Countdowns restored paused, with their frozen remaining time.
    public var paused: [String: Duration]
    /// Countdowns whose deadline passed while the process was not running: not restored, and
    /// nobody heard their finish. An app treats each as finished (enables its button).
    public var expired: [String]
    /// Keys that already had a countdown in the scheduler: the running one was kept, and the
    /// store's record of the key was not restored.
    public var kept: [String]

    /// A restoration's answer (`running`, `paused`, `expired`, `kept`: the properties of the
    /// same names): for a backend of your own, or a test.
    public init(running: [String: Duration] = [:], paused: [String: Duration] = [:], expired: [String] = [], kept: [String] = []) {
        self.running = running
        self.paused = paused
        self.expired = expired
        self.kept = kept
    }
}
