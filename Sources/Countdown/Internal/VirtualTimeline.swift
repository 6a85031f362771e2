import CountdownSupport
import Synchronization

/// The virtual scheduler's due countdowns, on the clock of its ``VirtualWorld``, which moves
/// only when its ``VirtualScheduler`` advances it: the instants its countdowns are due at, in a
/// ``DueQueue`` as the timestamp backend's ticker keeps them, but popped by `advance`, never
/// by a timer. No thread, no sleep.
final class VirtualTimeline: Sendable {
    /// The clock: the world's, which the engine's delivery side reads too.
    let world: VirtualWorld
    private let due = Locked(DueQueue())

    init(world: VirtualWorld) {
        self.world = world
    }

    var nanoseconds: Int64 { world.nanoseconds }

    func schedule(_ items: some Sequence<DueItem>) {
        due.withLock { queue in for item in items { queue.insert(item) } }
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
        world.move(to: instant)
        return instant
    }

    /// Forgets every due countdown: the scheduler was shut down.
    func stop() {
        due.withLock { $0 = DueQueue() }
    }
}

/// The virtual scheduler's mechanism: remaining = deadline − virtual now (the timestamp
/// strategy's ``DeadlineTrack``, on the virtual clock), and a shared due-queue, as the
/// timestamp strategy's ticker, popped by ``VirtualScheduler/advance(by:)`` instead of a
/// thread. Its first fires are filed by the drain, as the ticker's are.
struct VirtualMechanism: CountdownMechanism {
    typealias Progress = DeadlineTrack
    let timeline: VirtualTimeline

    var arming: ArmingStyle { .sharedDueQueue }

    func now() -> Moment {
        let now = timeline.nanoseconds
        return Moment(monotonic: MonotonicInstant(nanoseconds: UInt64(max(now, 0))), clock: now)
    }

    func file(_ arms: ContiguousArray<Outbox.Arm>) {
        timeline.schedule(arms.lazy.map { DueItem(due: $0.firstFire, index: $0.id.index, arm: $0.id.arm) })
    }

    func shutdown() { timeline.stop() }
}
