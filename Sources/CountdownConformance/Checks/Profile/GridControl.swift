import CountdownSupport
import Dispatch
import Synchronization

/// The drift check's control: a grid timer of the check's own, beside the backend under test.
/// A thread sleeps to the absolute instants first + k·T (a grid cannot drift) and hands each
/// tick to the harness's delivery queue, where it is stamped as an observer's event is. Its
/// lateness is the machine's alone: when it grows over a round, the machine fell behind (a
/// starved thread pool, a busier neighbour), and the backend's ticks were late for the same
/// reason, not by a schedule that drifts.
final class GridControl: Sendable {
    private let stamps = Locked<[UInt64]>([])
    private let running = Atomic<Bool>(true)

    /// Starts ticking every `tick` on `queue`, from one tick after now; `stamp` reads the check's clock.
    init(tick: Duration, queue: DispatchQueue, stamp: @escaping @Sendable () -> UInt64) {
        let interval = nanoseconds(tick)
        let first = SystemClocks.monotonic() + interval
        OSThreads.start("conformance-grid") { [self] in
            var k: UInt64 = 0
            while running.load(ordering: .relaxed) {
                SystemClocks.sleep(untilMonotonic: first + k * interval)
                k += 1
                queue.async { self.stamps.withLock { $0.append(stamp()) } }
            }
        }
    }

    /// Stops the thread (after at most one more tick) and returns the stamps, in order.
    func stop() -> [UInt64] {
        running.store(false, ordering: .relaxed)
        return stamps.withLock { $0 }
    }
}
