import CountdownSupport
import Synchronization

/// The virtual scheduler's clock and its due countdowns: a clock that moves only when its
/// ``VirtualScheduler`` advances it, and the instants its countdowns are due at, in a
/// ``DueQueue`` as the timestamp backend's ticker keeps them, but popped by `advance`, never
/// by a timer. No thread, no sleep.
final class VirtualTimeline: Sendable {
    /// Nanoseconds since the clock's origin. Read under the table's lock by the mechanism,
    /// written only by the one `advance` under way.
    private let clock: Atomic<Int64>
    private let due = Locked(DueQueue())

    init(origin: Duration) {
        clock = Atomic(origin.nanoseconds)
    }

    var nanoseconds: Int64 { clock.load(ordering: .acquiring) }

    func schedule(_ item: DueItem) {
        due.withLock { $0.insert(item) }
    }

    /// Moves every countdown due at the earliest instant, if that instant is at or before
    /// `limit`, into `batch`, and moves the clock to it (never back). Nil when nothing is due
    /// by `limit`.
    func popEarliest(through limit: Int64, into batch: inout [DueItem]) -> Int64? {
        let instant = due.withLock { queue -> Int64? in
            guard let earliest = queue.earliest, Int64(earliest.nanoseconds) <= limit else { return nil }
            queue.popDue(at: earliest, into: &batch)
            return Int64(earliest.nanoseconds)
        }
        guard let instant else { return nil }
        move(to: instant)
        return instant
    }

    /// Moves the clock to `instant`, never back (a countdown armed at an instant already past
    /// fires at the clock's time).
    func move(to instant: Int64) {
        let now = clock.load(ordering: .acquiring)
        if instant > now { clock.store(instant, ordering: .releasing) }
    }

    /// Forgets every due countdown: the scheduler was shut down.
    func stop() {
        due.withLock { $0 = DueQueue() }
    }
}

/// The virtual scheduler's mechanism: remaining = deadline − virtual now (the timestamp
/// strategy's ``DeadlineTrack``, on the virtual clock), timers as due instants in the timeline.
/// Deliveries are never queued: ``VirtualScheduler/advance(by:)`` runs them before it returns.
struct VirtualMechanism: CountdownMechanism {
    typealias Progress = DeadlineTrack
    let timeline: VirtualTimeline

    func now() -> Moment {
        let now = timeline.nanoseconds
        return Moment(monotonic: MonotonicInstant(nanoseconds: UInt64(max(now, 0))), clock: now)
    }

    func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant, table: KeyedCountdowns<Self>) {
        timeline.schedule(DueItem(due: firstFire, index: id.index, arm: id.arm))
    }

    /// Nothing to release: the item pops at its time and is found stale.
    func disarm(_ handle: Void) {}

    var keepsHandles: Bool { false }
    var queuesDeliveries: Bool { false }

    func shutdown() { timeline.stop() }
}
