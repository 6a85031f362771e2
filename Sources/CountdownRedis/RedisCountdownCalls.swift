#if Redis
import Countdown

/// A Redis scheduler's calls that `CountdownScheduler` declares as non-throwing, throwing
/// ``CountdownError/unavailable(_:)`` when Redis cannot be reached instead of answering as if
/// nothing were there: `try scheduler.throwing.cancel(key: key)`.
///
/// The protocol's own forms answer false, nil, `[]` or 0 then, and count the failure in
/// `unavailableCalls`: use these where a wrong answer while Redis is down matters (a rate
/// limiter that must not let a request through on a `remaining` of nil, say).
public struct RedisCountdownCalls: Sendable {
    let engine: any FleetEngine

    public func cancel(key: String) throws(CountdownError) -> Bool { try engine.cancel(key: key) }
    public func pause(key: String) throws(CountdownError) -> Bool { try engine.pause(key: key) }
    public func resume(key: String) throws(CountdownError) -> Bool { try engine.resume(key: key) }
    public func remaining(key: String) throws(CountdownError) -> Duration? { try engine.remaining(key: key) }
    public func activeKeys() throws(CountdownError) -> [String] { try engine.activeKeys() }
    public func activeCount() throws(CountdownError) -> Int { try engine.activeCount() }
}

#endif
