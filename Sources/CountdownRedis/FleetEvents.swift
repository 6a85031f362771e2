#if Redis
import Countdown

/// `events(key:)` for the Redis strategies: a stream fed by a watch, attached at once.
enum FleetEvents {
    /// `attach` attaches the watch (false: nothing under the key); `detach` lets it go when the
    /// consumer leaves, the countdown running on.
    static func stream(
        attach: (LocalWatch.Watch) throws(CountdownError) -> Bool,
        detach: @escaping @Sendable (LocalWatch.Watch) -> Void
    ) -> AsyncStream<CountdownEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: CountdownEvent.self)
        let watch = LocalWatch.Watch { event in
            continuation.yield(event)
            if event.kind == .finished { continuation.finish() }
        } onEnd: {
            continuation.finish()
        }
        let attached = (try? attach(watch)) ?? false
        guard attached else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { _ in detach(watch) }
        return stream
    }
}
#endif
