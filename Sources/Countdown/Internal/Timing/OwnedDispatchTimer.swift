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

    /// `handler` is told how many intervals passed since the last call: the source's `data`,
    /// more than one when the process was stalled or frozen (read in the handler, where
    /// libdispatch defines it).
    init(queue: DispatchQueue, countingHandler handler: @escaping @Sendable (_ intervals: Int) -> Void) {
        source = DispatchSource.makeTimerSource(queue: queue)
        // Weak: the source keeps its handler, which must not keep the source's owner.
        source.setEventHandler { [weak self] in
            handler(max(Int(self?.source.data ?? 1), 1))
        }
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
