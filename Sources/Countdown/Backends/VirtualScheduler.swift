import CountdownSupport
import Dispatch
import Synchronization

/// A scheduler for tests, whose clock moves only when the test says so: a "Retry in 60 s"
/// screen is tested in milliseconds, and two runs of a test deliver the same events in the
/// same order.
///
/// ```swift
/// let scheduler = try VirtualScheduler(deliveryQueue: .main)
/// try scheduler.start(key: "sms", duration: .seconds(60)) { event in label = "\(event.remaining)" }
/// try scheduler.advance(by: .seconds(59))   // every tick on the way has been delivered
/// ```
///
/// It is the timestamp strategy (``TimestampScheduler``: remaining = deadline − now, one
/// ticker for every countdown) on a virtual clock, the same engine and ticker code. ``advance(by:)`` runs every tick and finish due in the interval,
/// in deadline order, and returns after their observers have run on the delivery queue (at once,
/// when it is called on that queue: from the main actor, with the main queue as delivery queue).
/// Events decided outside `advance` (a start's first tick, an attach's) wait for the next one;
/// `advance(by: .zero)` delivers them without moving the clock. It starts no thread and never
/// sleeps; countdowns due at one instant fire in an order fixed by the calls that armed them.
///
/// It runs the engine every built-in backend runs, the same code, with the world replaced
/// (`VirtualWorld`): the ticker's wake-ups, deliveries, store writes and the room made ahead
/// are jobs that `advance` runs, on the virtual clock, before it returns.
///
/// Not a strategy, and never measured: `countdown-bench` lists it as `virtual` and refuses to
/// run or suspend it.
public final class VirtualScheduler: KeyedCountdownScheduler, EngineBacked, VirtualTimeScheduling, Sendable {
    public let profile: CountdownProfile
    let engine: CountdownEngine<TimestampMechanism>
    /// The world the engine runs in: its clock, and the jobs `advance` runs. A test of the
    /// engine runs them one list at a time.
    package let world: VirtualWorld
    /// Set while an `advance` runs: a second one (from an observer, or another thread) is refused.
    private let isAdvancing = Atomic<Bool>(false)
    /// Marks the delivery queue, so that an `advance` made on it delivers in place.
    private let onQueue = QueueMark()

    /// - Parameters:
    ///   - tickInterval: `T`, how often a running countdown ticks, at least ``CountdownLimits/minimumTickInterval``.
    ///   - maximumDuration: the longest countdown `start` accepts; a longer one throws.
    ///   - deliveryQueue: the serial queue every observer runs on (`.main` in a test on the main actor); nil: a queue of its own.
    ///   - now: where the clock starts: `.zero` for a first launch, the previous scheduler's
    ///     ``now`` for a relaunch that restores from a ``store(path:)`` of it.
    ///   - capacity: how many countdowns it runs at once, if a test wants a limit; nil: none.
    /// - Throws: ``CountdownError`` for a tick interval, maximum duration, capacity or starting
    ///   instant out of range.
    public init(
        tickInterval: Duration = .seconds(1),
        maximumDuration: Duration = CountdownLimits.defaultMaximumDuration,
        capacity: Int? = nil,
        deliveryQueue: DispatchQueue? = nil,
        now: Duration = .zero
    ) throws(CountdownError) {
        guard now >= .zero else { throw .invalidConfiguration("the clock cannot start before zero (\(now.text))") }
        let settings = try SchedulerSettings(
            tickInterval: tickInterval, maximumDuration: maximumDuration, capacity: capacity,
            deliveryQueue: deliveryQueue, label: "countdown.virtual")
        let world = VirtualWorld(origin: now)
        let runtime = EngineRuntime.virtual(world, deliveryQueue: settings.deliveryQueue)
        let clock = CountdownClock(name: "virtual", followsWallClock: false) { .nanoseconds(world.nanoseconds) }
        engine = CountdownEngine(
            settings: settings, mechanism: TimestampMechanism(tick: tickInterval, clock: clock, runtime: runtime),
            runtime: runtime)
        self.world = world
        onQueue.mark(settings.deliveryQueue)
        profile = Self.profile(capacity: capacity, maximumDuration: maximumDuration)
    }

    deinit { engine.shutdown() }

    /// What a scheduler made with these arguments declares, without making one: `capacity`, `maximumDuration` as its initializer takes them.
    public static func profile(
        capacity: Int? = nil, maximumDuration: Duration = CountdownLimits.defaultMaximumDuration
    ) -> CountdownProfile {
        CountdownProfile(
            name: "virtual",
            mechanism: "for tests, never measured: a deadline per countdown on a virtual clock that moves only by advance(by:)",
            threads: "none: advance delivers on the delivery queue before it returns",
            suspension: .keepsDeadline,
            wallClockJump: .immune,
            capacity: capacity,
            maximumDuration: maximumDuration)
    }

    /// The time on the clock since its origin (`.zero`, or the `now` it was made with).
    public var now: Duration { .nanoseconds(world.nanoseconds) }

    /// Moves the clock forward by `duration`; see ``advance(to:)``.
    public func advance(by duration: Duration) throws(VirtualTimeError) {
        guard duration >= .zero else { throw .negativeInterval(duration) }
        try advance(to: now + duration)
    }

    /// Moves the clock to `instant`, running every tick and finish due on the way in deadline
    /// order, each at the instant it was due (``now`` reads it inside the observer), and returns
    /// once their observers have run on the delivery queue. With a store attached, a finish is
    /// delivered once the file no longer holds its countdown, as always: `advance` waits for
    /// the write.
    public func advance(to instant: Duration) throws(VirtualTimeError) {
        guard isAdvancing.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { throw .alreadyAdvancing }
        defer { isAdvancing.store(false, ordering: .releasing) }
        guard instant >= now else { throw .instantInThePast(instant, now: now) }
        let limit = instant.nanoseconds
        settle()  // what was decided before this call, at the instant it was decided
        while fireEarliest(through: limit) {
            settle()
        }
        world.move(to: limit)
        settle()
    }

    /// Runs the world's next wake-up (the ticker's), if it is due at or before `limit`: moves
    /// the clock to it, and runs it on the delivery queue, as the timer's thread does (what it
    /// decided is delivered at once; the jobs it queues wait for ``settle()``). False when
    /// nothing is due by `limit`. For tests of the engine, which look between the steps.
    @discardableResult
    package func fireEarliest(through limit: Int64) -> Bool {
        world.wakeEarliest(through: limit) { wakeUp in onDeliveryQueue(wakeUp) }
    }

    /// Runs every job the engine queued (store writes, room made ahead, deliveries on the
    /// delivery queue), and those they queue, until none is left.
    package func settle() {
        world.settle(deliveryQueue: engine.settings.deliveryQueue, onQueue: onQueue.isCurrent)
    }

    private func onDeliveryQueue(_ body: () -> Void) {
        if onQueue.isCurrent { body() } else { engine.settings.deliveryQueue.sync(execute: body) }
    }

    /// A store whose wall and boot clocks read this scheduler's clock (one boot, which never
    /// ends): a test kills a scheduler that restored from it, makes another with
    /// `now: killed.now` (plus the time the app was not running), restores it from
    /// `store(path:)` with the same `path`, and the countdowns come back as they would on a device.
    public func store(path: String) -> CountdownStore {
        let world = world
        // The wall clock reads an arbitrary date plus the virtual time: only differences count.
        let epoch: Int64 = 1_767_225_600 * 1_000_000_000  // 2026-01-01
        return CountdownStore(path: path, clocks: StoreClocks(
            wall: { epoch &+ world.nanoseconds }, boot: { world.nanoseconds }, bootID: "virtual"))
    }
}

/// Tells whether code runs on one queue, by a specific value set on it.
///
/// `@unchecked Sendable`: `DispatchSpecificKey` is an immutable token the Dispatch overlay
/// does not annotate.
private final class QueueMark: @unchecked Sendable {
    private let key = DispatchSpecificKey<UInt8>()

    func mark(_ queue: DispatchQueue) { queue.setSpecific(key: key, value: 1) }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == 1 }
}
