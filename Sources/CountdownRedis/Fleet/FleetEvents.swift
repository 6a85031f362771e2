#if Redis
import Countdown

/// `events(key:)` for the Redis strategies: a stream fed by an observer attached at once.
/// `attach` is the attach call for the stream's observer (nil: nothing under the key);
/// `detach` lets the observer go when the consumer leaves, the countdown running on. What the
/// attach throws is thrown, the stream ended.
struct FleetEvents: Sendable {
    private let stream: AsyncStream<CountdownEvent>
    private let continuation: AsyncStream<CountdownEvent>.Continuation
    private let observer: FleetObserver

    private init() {
        let (stream, continuation) = AsyncStream.makeStream(of: CountdownEvent.self)
        self.stream = stream
        self.continuation = continuation
        observer = FleetObserver { event in
            continuation.yield(event)
            if event.kind == .finished { continuation.finish() }
        } onEnd: {
            continuation.finish()
        }
    }

    /// Blocking the calling thread while the attach is answered.
    static func wait(
        attach: (FleetObserver) -> FleetCall<Duration?>, detach: @escaping @Sendable (FleetObserver) -> Void
    ) throws(CountdownError) -> AsyncStream<CountdownEvent> {
        let events = FleetEvents()
        do {
            return events.attached(try attach(events.observer).wait() != nil, detach)
        } catch {
            events.continuation.finish()
            throw error
        }
    }

    /// Suspending the task while the attach is answered.
    static func run(
        attach: (FleetObserver) -> FleetCall<Duration?>, detach: @escaping @Sendable (FleetObserver) -> Void
    ) async throws(CountdownError) -> AsyncStream<CountdownEvent> {
        let events = FleetEvents()
        do {
            return events.attached(try await attach(events.observer).run() != nil, detach)
        } catch {
            events.continuation.finish()
            throw error
        }
    }

    private func attached(_ attached: Bool, _ detach: @escaping @Sendable (FleetObserver) -> Void) -> AsyncStream<CountdownEvent> {
        guard attached else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [observer] _ in detach(observer) }
        return stream
    }
}
#endif
