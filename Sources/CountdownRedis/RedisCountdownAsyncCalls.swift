#if Redis
import Countdown

/// A Redis scheduler's calls for tasks: `try await scheduler.async.start(key:duration:observer:)`.
///
/// What a server's request handlers call. They run on Swift's cooperative pool, one thread a
/// core; these calls suspend while Redis answers, so no thread of the pool waits on the network,
/// and the calls of many tasks share the member's pipelined connection (``RedisCountdownScheduler``'s
/// calls made while others are on their way go out together in the next write). The blocking
/// forms (the protocol's, and ``RedisCountdownCalls``) wait on the same connection and are for
/// threads that are not the pool's.
///
/// Each throws `CountdownError/unavailable(_:_:)` when Redis cannot answer, as
/// ``RedisCountdownCalls`` does. A call is not withdrawn once made: a task cancelled while its
/// call is on its way gets the call's answer, and the fleet holds what that answer says (a
/// start started, a cancel cancelled), never half of it.
public struct RedisCountdownAsyncCalls: Sendable {
    let engine: any FleetEngine

    /// Starts a countdown of `duration` under `key`, or attaches `observer` to the one running there.
    @discardableResult
    public func start(key: String, duration: Duration, observer: @escaping CountdownObserver) async throws(CountdownError) -> CountdownStart {
        try await engine.start(key: key, duration: duration, observer: FleetObserver(observer)).run()
    }

    /// Starts every countdown of `batch`, many to a script: the answers, in order; one that
    /// fails does not stop the others.
    public func start(_ batch: [(key: String, duration: Duration, observer: CountdownObserver)]) async -> [Result<CountdownStart, CountdownError>] {
        await engine.startMany(batch.map { ($0.key, $0.duration, FleetObserver($0.observer)) }).run()
    }

    /// Attaches `observer` to the countdown under `key`: its remaining time, or nil when none runs.
    @discardableResult
    public func attach(key: String, observer: @escaping CountdownObserver) async throws(CountdownError) -> Duration? {
        try await engine.attach(key: key, observer: FleetObserver(observer)).run()
    }

    /// The events of the countdown under `key`: a stream that ends at once when nothing runs there.
    public func events(key: String) async throws(CountdownError) -> AsyncStream<CountdownEvent> {
        try await FleetEvents.run { [engine] in engine.attach(key: key, observer: $0) } detach: { [engine] in engine.watch.detach($0) }
    }

    /// Cancels the fleet's countdown under `key`: whether one ran.
    @discardableResult
    public func cancel(key: String) async throws(CountdownError) -> Bool { try await engine.cancel(key: key).run() }
    /// Pauses the fleet's countdown under `key`: whether a running one was paused.
    @discardableResult
    public func pause(key: String) async throws(CountdownError) -> Bool { try await engine.pause(key: key).run() }
    /// Resumes the fleet's paused countdown under `key`: whether one was resumed.
    @discardableResult
    public func resume(key: String) async throws(CountdownError) -> Bool { try await engine.resume(key: key).run() }
    /// The time left on the fleet's countdown under `key`; nil when none runs or is paused.
    public func remaining(key: String) async throws(CountdownError) -> Duration? { try await engine.remaining(key: key).run() }
    /// Every key with a countdown in the fleet, running or paused.
    public func activeKeys() async throws(CountdownError) -> [String] { try await engine.activeKeys().run() }
    /// How many countdowns the fleet has, running or paused.
    public func activeCount() async throws(CountdownError) -> Int { try await engine.activeCount().run() }
}
#endif
