import Dispatch

/// Owns one `DispatchSourceTimer`.
///
/// `@unchecked Sendable` because `DispatchSourceTimer` is not annotated, although libdispatch
/// makes `schedule`, `activate` and `cancel` safe from any thread; nothing else is touched.
final class OwnedDispatchTimer: @unchecked Sendable {
    private let source: DispatchSourceTimer

    init(queue: DispatchQueue, handler: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: queue)
        source.setEventHandler(handler: handler)
    }

    /// Libdispatch keeps the repeating grid itself (`deadline` + k·interval); after a stall it
    /// calls the handler once, not once per missed interval.
    func schedule(at deadline: MonotonicInstant, repeating interval: Duration?) {
        source.schedule(deadline: deadline.dispatchTime, repeating: interval?.dispatchInterval ?? .never)
    }

    func activate() { source.activate() }

    /// No handler starts after this returns.
    func cancel() { source.cancel() }
}
