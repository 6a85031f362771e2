import CountdownSupport
import Dispatch

/// Strategy 5: Swift concurrency, what a Swift developer reaches for today. One `Task` per
/// countdown, sleeping with `Task.sleep(until:tolerance:clock:)` on `ContinuousClock`.
///
/// Each deadline is the previous *scheduled* deadline plus the tick (start + k·T), never the
/// wake-up plus the tick, as swift-async-algorithms' `AsyncTimerSequence` keeps its grid, so
/// late wake-ups do not add up. Remaining time is the deadline minus `ContinuousClock` now:
/// a frozen process keeps its deadline (one catch-up tick on resume, the missed grid points
/// skipped), and the wall clock never moves it. `cancel` and `pause` cancel the task; `resume`
/// starts another.
///
/// A sleeping task holds no thread. Every wake-up runs on the cooperative pool, which on Linux
/// is libdispatch's global pool, as wide as the machine has cores, and shared with
/// `OperationQueue` and every other task in the process: what blocks those threads delays
/// every countdown's wake-up.
public final class TaskScheduler: KeyedCountdownScheduler, EngineBacked, Sendable {
    public let profile: CountdownProfile
    let engine: CountdownEngine<TaskMechanism>

    /// - Parameters:
    ///   - tickInterval: `T`, how often a running countdown ticks, at least ``CountdownLimits/minimumTickInterval``.
    ///   - tolerance: passed to every `Task.sleep` as its tolerance, so that the system may
    ///     wake sleeping tasks together, up to this late. Nil (the default) passes none.
    ///     Linux's libdispatch ignores it; on Apple platforms it is the timer's leeway.
    ///   - maximumDuration: the longest countdown `start` accepts; a longer one throws.
    ///   - deliveryQueue: the serial queue every observer runs on (the main queue for an app's UI); nil: a queue of its own.
    /// - Throws: ``CountdownError`` for a tick interval, maximum duration or tolerance out of range.
    public init(
        tickInterval: Duration = .seconds(1),
        tolerance: Duration? = nil,
        maximumDuration: Duration = CountdownLimits.defaultMaximumDuration,
        deliveryQueue: DispatchQueue? = nil
    ) throws(CountdownError) {
        let settings = try SchedulerSettings(
            tickInterval: tickInterval, maximumDuration: maximumDuration, capacity: nil,
            deliveryQueue: deliveryQueue, label: "countdown.task")
        if let tolerance { try settings.validate(tolerance: tolerance) }
        engine = CountdownEngine(
            settings: settings,
            mechanism: TaskMechanism(tick: tickInterval, tolerance: tolerance, clock: ContinuousInstants()))
        profile = Self.profile(tolerance: tolerance, maximumDuration: maximumDuration)
    }

    deinit { engine.shutdown() }

    /// What a scheduler made with these arguments declares, without making one: `tolerance`, `maximumDuration` as its initializer takes them.
    public static func profile(
        tolerance: Duration? = nil, maximumDuration: Duration = CountdownLimits.defaultMaximumDuration
    ) -> CountdownProfile {
        CountdownProfile(
            name: "task",
            mechanism: "one Task per countdown: Task.sleep(until:) on ContinuousClock to start + k·T; "
                + "remaining = deadline − ContinuousClock now",
            threads: "none of its own: wake-ups run on the cooperative pool (libdispatch's on Linux, "
                + "one thread per core), shared with OperationQueue and every task",
            suspension: .keepsDeadline,
            wallClockJump: .immune,
            capacity: nil,
            maximumDuration: maximumDuration,
            tolerance: tolerance ?? .zero)
    }
}

/// `ContinuousClock`'s instants as the table keeps them: nanoseconds of `CLOCK_BOOTTIME` (what
/// ``SystemClocks/continuous()`` reads, the clock `ContinuousClock` reads), and back.
struct ContinuousInstants: Sendable {
    /// One instant read both ways; the clock reading is taken first, so an instant converted
    /// through this pair is never earlier than the nanoseconds it came from.
    private let nanoseconds: Int64
    private let instant: ContinuousClock.Instant

    init() {
        nanoseconds = SystemClocks.continuous()
        instant = ContinuousClock.now
    }

    func now() -> MonotonicInstant {
        MonotonicInstant(nanoseconds: UInt64(SystemClocks.continuous()))
    }

    func instant(_ point: MonotonicInstant) -> ContinuousClock.Instant {
        instant.advanced(by: .nanoseconds(Int64(point.nanoseconds) &- nanoseconds))
    }
}

struct TaskMechanism: CountdownMechanism {
    let tick: Duration
    let tolerance: Duration?
    let clock: ContinuousInstants

    /// The grid and the remaining time are both on `ContinuousClock`, the clock the tasks
    /// sleep on, so a deadline needs no conversion but the type's.
    func now() -> Moment {
        let now = clock.now()
        return Moment(monotonic: now, clock: Int64(now.nanoseconds))
    }

    typealias Progress = DeadlineTrack

    var arming: ArmingStyle { .timerPerCountdown(shutdown: .disarmEach) }

    /// Detached: the countdown belongs to the scheduler, not to the task or actor that
    /// started it, and must not inherit its cancellation or its task-local values.
    func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant,
             engine: CountdownEngine<Self>) -> Task<Void, Never> {
        let clock = self.clock
        let tolerance = self.tolerance
        return Task.detached { [weak engine] in
            var deadline = firstFire
            while true {
                do {
                    try await Task.sleep(until: clock.instant(deadline), tolerance: tolerance, clock: .continuous)
                } catch {
                    return  // cancelled: paused, cancelled, finished early by shutdown
                }
                // The engine is held only between sleeps: a scheduler released with no
                // shutdown() is not kept alive by its sleeping tasks.
                guard let engine, case .continues(let next) = engine.fire(id) else { return }
                deadline = next
            }
        }
    }

    func disarm(_ task: Task<Void, Never>) { task.cancel() }
}
