#if Redis
import Countdown

/// `events(key:)` for the Redis strategies: a stream fed by an observer attached at once.
enum FleetEvents {
    /// `attach` attaches the observer (false: nothing under the key); `detach` lets it go when
    /// the consumer leaves, the countdown running on. What `attach` throws is thrown.
    static func stream(
        attach: (FleetObserver) throws(CountdownError) -> Bool,
        detach: @escaping @Sendable (FleetObserver) -> Void
    ) throws(CountdownError) -> AsyncStream<CountdownEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: CountdownEvent.self)
        let observer = FleetObserver { event in
            continuation.yield(event)
            if event.kind == .finished { continuation.finish() }
        } onEnd: {
            continuation.finish()
        }
        let attached: Bool
        do {
            attached = try attach(observer)
        } catch {
            continuation.finish()
            throw error
        }
        guard attached else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { _ in detach(observer) }
        return stream
    }
}
#endif
