import Countdown

/// How many replicas must hold a start before it answers: Redis' `WAIT`, sent after each start
/// on the same connection. Redis replicates after it answers, so a master that dies a moment
/// after a start can take the start with it, and the replica promoted in its place has never
/// heard of the countdown (``RedisCountdownScheduler/lostCountdowns`` counts such ends). With
/// `replicas`, a start answers only once that many replicas acknowledged it; one they did not
/// acknowledge within `timeout` throws `CountdownError/unavailable(_:_:)` with
/// `UnavailableReason/notReplicated`: it was made on the master and may run, or may be lost;
/// starting again is safe (it attaches if the countdown is there).
///
/// What it buys and costs is measured by `countdown-bench fleet --parts 6`: starts lost when a
/// master is SIGKILLed, with and without it, and the time a start takes. `WAIT` makes losing an
/// acknowledged start unlikely, not impossible: a replica that acknowledged may itself fail
/// before it is promoted (Redis' own words: `WAIT` does not make Redis strongly consistent).
public struct RedisReplicas: Sendable, Hashable {
    /// How many replicas must acknowledge, 1 or more.
    public var count: Int
    /// How long a start waits for them, in whole milliseconds (at least 1).
    public var timeout: Duration

    /// `count` replicas, waited for up to `timeout`.
    public static func acknowledged(by count: Int, within timeout: Duration) -> RedisReplicas {
        RedisReplicas(count: count, timeout: timeout)
    }

    /// Whole milliseconds, rounded up: `WAIT`'s `0` would mean for ever.
    var milliseconds: Int64 { max(1, (timeout.nanoseconds + 999_999) / 1_000_000) }

    /// A `WAIT` holds its connection: it must end before a command's answer is given up for lost.
    func validate(against endpoint: RedisEndpoint) throws(CountdownError) {
        guard count >= 1 else { throw .invalidConfiguration("replicas to acknowledge a start, \(count), must be at least 1") }
        guard timeout > .zero, timeout < endpoint.commandTimeout else {
            throw .invalidConfiguration("the wait for replicas, \(timeout), must be positive and shorter than a command's timeout, \(endpoint.commandTimeout)")
        }
    }
}
