/// Bounds shared by every backend.
public enum CountdownLimits {
    /// Shorter ticks are refused: a 1 ns repeating timer is a busy loop, not a countdown.
    public static let minimumTickInterval: Duration = .milliseconds(1)
    /// The maximum duration a backend declares unless it is configured otherwise.
    /// Thirty days covers rate-limit windows while keeping every deadline far from
    /// the overflow of `DispatchTime` arithmetic.
    public static let defaultMaximumDuration: Duration = .seconds(30 * 24 * 3600)
}
