import CountdownSupport
import Dispatch
import Synchronization

/// The world of virtual time, as ``EngineRuntime`` reaches it: a clock that moves only when
/// told, and three lists of jobs (deliveries, store writes, background work) that run only when
/// someone runs them. Nothing here starts a thread or sleeps, so what the engine does in it is
/// deterministic: ``VirtualScheduler/advance(by:)`` runs every job due before it returns, and a
/// test of the engine runs them one list at a time, to look between the steps (a finish held
/// for its write, a drain that handed the queue back, room not made yet).
package final class VirtualWorld: Sendable {
    package enum Jobs: Sendable {
        case delivery
        case write
        case background
    }

    private struct Lists {
        var waiting: [Jobs: [@Sendable () -> Void]] = [:]
        var runs: [Jobs: Int] = [:]
    }

    /// Nanoseconds since the clock's origin.
    private let clock: Atomic<Int64>
    private let lists = Locked(Lists())
    private let sleepHook = Locked<(@Sendable (UInt64) -> Void)?>(nil)
    /// The wake-up targets the engine started (the ticker), held weakly: a scheduler let go of
    /// takes its ticker with it.
    private let targets = Locked<[WeakTarget]>([])

    private struct WeakTarget {
        weak var target: (any WakeUpTarget)?
    }

    package init(origin: Duration = .zero) {
        clock = Atomic(origin.nanoseconds)
    }

    /// The time on the clock, in nanoseconds since its origin.
    package var nanoseconds: Int64 { clock.load(ordering: .acquiring) }

    /// The same, as the delivery side's monotonic clock reads it (never negative).
    var monotonic: UInt64 { UInt64(max(nanoseconds, 0)) }

    /// Moves the clock to `instant`, never back.
    package func move(to instant: Int64) {
        var now = clock.load(ordering: .acquiring)
        while instant > now {
            let (exchanged, original) = clock.compareExchange(expected: now, desired: instant, ordering: .acquiringAndReleasing)
            if exchanged { return }
            now = original
        }
    }

    /// Lets `duration` pass with nothing due on the way: what a slow observer or a busy
    /// thread spends (the engine's pacing sees it; no countdown fires).
    package func elapse(_ duration: Duration) {
        move(to: nanoseconds &+ duration.nanoseconds)
    }

    /// Runs `hook` each time the engine would sleep to let events gather (a lingering drain):
    /// a test decides events there as another thread would meanwhile.
    package func onSleep(_ hook: (@Sendable (_ until: UInt64) -> Void)?) {
        sleepHook.withLock { $0 = hook }
    }

    func slept(until deadline: UInt64) {
        let hook = sleepHook.withLock { $0 }
        hook?(deadline)
    }

    /// Keeps `target`, whose wake-ups ``wakeEarliest(through:on:)`` runs.
    func keep(_ target: some WakeUpTarget) {
        targets.withLock { $0.append(WeakTarget(target: target)) }
    }

    /// Runs the earliest wake-up due at or before `limit` among the targets kept: moves the
    /// clock to it, and hands the wake-up to `run`, which runs it on the delivery queue as the
    /// timer's thread would. False when none is due by `limit`.
    func wakeEarliest(through limit: Int64, on run: (() -> Void) -> Void) -> Bool {
        // Read outside the world's lock: a target reads its next wake-up under its own.
        let kept = targets.withLock { targets in
            targets.removeAll { $0.target == nil }
            return targets.compactMap(\.target)
        }
        var earliest: (instant: MonotonicInstant, target: any WakeUpTarget)?
        for target in kept {
            guard case .at(let instant) = target.nextWakeUp, earliest.map({ instant < $0.instant }) ?? true else { continue }
            earliest = (instant, target)
        }
        guard let earliest, Int64(earliest.instant.nanoseconds) <= limit else { return false }
        move(to: Int64(earliest.instant.nanoseconds))
        run { earliest.target.wakeUp() }
        return true
    }

    func enqueue(_ jobs: Jobs, _ job: @escaping @Sendable () -> Void) {
        lists.withLock { $0.waiting[jobs, default: []].append(job) }
    }

    /// How many jobs of `jobs` wait.
    package func waiting(_ jobs: Jobs) -> Int {
        lists.withLock { $0.waiting[jobs]?.count ?? 0 }
    }

    /// How many jobs of `jobs` have run since the world was made.
    package func ran(_ jobs: Jobs) -> Int {
        lists.withLock { $0.runs[jobs, default: 0] }
    }

    /// Runs the jobs of `jobs` one at a time, in the order they were queued, those they queue
    /// included, until none is left; on the calling thread (deliveries: on the delivery queue,
    /// which the caller is on). Returns how many ran.
    @discardableResult
    package func run(_ jobs: Jobs) -> Int {
        var count = 0
        while let job = next(jobs) {
            job()
            count += 1
        }
        return count
    }

    /// Runs the waiting store writes (see ``run(_:)``).
    @discardableResult
    func runWrites() -> Int { run(.write) }

    private func next(_ jobs: Jobs) -> (@Sendable () -> Void)? {
        lists.withLock { lists -> (@Sendable () -> Void)? in
            guard let job = lists.waiting[jobs]?.first else { return nil }
            lists.waiting[jobs]!.removeFirst()
            lists.runs[jobs, default: 0] += 1
            return job
        }
    }

    /// Runs every waiting job, writes first, then background work, then deliveries (on
    /// `deliveryQueue`, or in place when `onQueue`), until none is left.
    func settle(deliveryQueue: DispatchQueue, onQueue: Bool) {
        while true {
            let ran = run(.write) + run(.background)
                + (onQueue ? run(.delivery) : deliveryQueue.sync { run(.delivery) })
            if ran == 0 { return }
        }
    }
}
