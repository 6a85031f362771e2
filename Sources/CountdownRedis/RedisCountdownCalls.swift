#if Redis
import Countdown

/// A Redis scheduler's calls that `CountdownScheduler` declares as non-throwing, throwing
/// `CountdownError/unavailable(_:_:)` when Redis cannot answer instead of answering as if
/// nothing were there: `try scheduler.throwing.cancel(key: key)`.
///
/// The protocol's own forms answer false, nil, `[]`, 0 or an empty stream then, and count the
/// failure in `unavailableCalls`: use these where a wrong answer while Redis is down matters (a
/// rate limiter that must not let a request through on a `remaining` of nil, a screen that must
/// not read "no countdown" from an outage).
public struct RedisCountdownCalls: Sendable {
    let engine: any FleetEngine

    /// Attaches `observer` to the countdown under `key`: its remaining time, or nil when none runs.
    @discardableResult
    public func attach(key: String, observer: @escaping CountdownObserver) throws(CountdownError) -> Duration? {
        try engine.attach(key: key, observer: FleetObserver(observer)).wait()
    }

    /// The events of the countdown under `key`, attached as ``attach(key:observer:)`` attaches: a stream that
    /// ends at once when nothing runs under the key; a throw when Redis cannot answer.
    public func events(key: String) throws(CountdownError) -> AsyncStream<CountdownEvent> {
        try FleetEvents.wait { [engine] in engine.attach(key: key, observer: $0) } detach: { [engine] in engine.watch.detach($0) }
    }

    /// Cancels the fleet's countdown under `key`: whether one ran.
    public func cancel(key: String) throws(CountdownError) -> Bool { try engine.cancel(key: key).wait() }
    /// Pauses the fleet's countdown under `key`: whether a running one was paused.
    public func pause(key: String) throws(CountdownError) -> Bool { try engine.pause(key: key).wait() }
    /// Resumes the fleet's paused countdown under `key`: whether one was resumed.
    public func resume(key: String) throws(CountdownError) -> Bool { try engine.resume(key: key).wait() }
    /// The time left on the fleet's countdown under `key`; nil when none runs or is paused.
    public func remaining(key: String) throws(CountdownError) -> Duration? { try engine.remaining(key: key).wait() }
    /// Every key with a countdown in the fleet, running or paused.
    public func activeKeys() throws(CountdownError) -> [String] { try engine.activeKeys().wait() }
    /// How many countdowns the fleet has, running or paused.
    public func activeCount() throws(CountdownError) -> Int { try engine.activeCount().wait() }
}
#endif
