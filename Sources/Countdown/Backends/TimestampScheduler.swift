import CountdownSupport
import Dispatch

/// Strategy 4: a deadline per countdown, and remaining = deadline − now computed from a clock
/// at every tick, as the articles did with timestamps. One shared ticker wakes for whatever is
/// due; there is no timer per key.
///
/// Reading a clock, it keeps its deadline through a frozen process (one catch-up tick on
/// resume, not a burst). With ``CountdownClock/wall`` (`Date`, the default, as the articles)
/// a change of the system clock moves the countdown: set forward, it ends early; set back, it
/// holds still (it never counts up). ``CountdownClock/continuous`` cannot be set.
///
/// Built for scale: countdowns are kept in a slab and a queue of due instants (a run in filing
/// order beside a 4-ary heap), one thread sleeps until the earliest and wakes once for what is
/// due, a wake-up handles everything due under one lock and delivers it as one batch on the
/// delivery queue, and an optional `tolerance` lets countdowns due close together share a
/// wake-up.
public final class TimestampScheduler: KeyedCountdownScheduler, EngineBacked, Sendable {
    public let profile: CountdownProfile
    let engine: CountdownEngine<TimestampMechanism>

    /// - Parameters:
    ///   - tickInterval: `T`, how often a running countdown ticks, at least ``CountdownLimits/minimumTickInterval``.
    ///   - clock: what remaining time is read from: ``CountdownClock/wall`` (default)
    ///     or ``CountdownClock/continuous``, or a custom clock (a test clock that jumps).
    ///   - tolerance: how late a tick may come by design, as `Timer.tolerance`: never early,
    ///     at most this late, so that countdowns due within it share one wake-up. Zero (the
    ///     default) wakes for every distinct due instant; only in a stream that has stayed dense
    ///     for 10 ms (a million countdowns, an instant due every microsecond) are wake-ups held
    ///     50 µs apart, Linux's own timer slack, and an instant due sooner waits for the next.
    ///   - maximumDuration: the longest countdown `start` accepts; a longer one throws.
    ///   - deliveryQueue: the serial queue every observer runs on (the main queue for an app's UI); nil: a queue of its own.
    /// - Throws: ``CountdownError`` for a tick interval, maximum duration or tolerance out of range.
    public init(
        tickInterval: Duration = .seconds(1),
        clock: CountdownClock = .wall,
        tolerance: Duration = .zero,
        maximumDuration: Duration = CountdownLimits.defaultMaximumDuration,
        deliveryQueue: DispatchQueue? = nil
    ) throws(CountdownError) {
        let settings = try SchedulerSettings(
            tickInterval: tickInterval, maximumDuration: maximumDuration, capacity: nil,
            deliveryQueue: deliveryQueue, label: "countdown.timestamp")
        try settings.validate(tolerance: tolerance)
        let runtime = EngineRuntime.system(deliveryQueue: settings.deliveryQueue)
        engine = CountdownEngine(
            settings: settings,
            mechanism: TimestampMechanism(tick: tickInterval, clock: clock, tolerance: tolerance, runtime: runtime),
            runtime: runtime)
        profile = Self.profile(clock: clock, tolerance: tolerance, maximumDuration: maximumDuration)
    }

    deinit { engine.shutdown() }

    /// What a scheduler made with these arguments declares, without making one: `clock`, `tolerance`, `maximumDuration` as its initializer takes them.
    public static func profile(
        clock: CountdownClock = .wall, tolerance: Duration = .zero,
        maximumDuration: Duration = CountdownLimits.defaultMaximumDuration
    ) -> CountdownProfile {
        CountdownProfile(
            name: "timestamp",
            variant: variant(clock: clock, tolerance: tolerance),
            mechanism: "a deadline per countdown; remaining = deadline − \(clock.name) clock now, "
                + "at ticks from one shared ticker (due times in filing order beside a 4-ary heap; a thread that sleeps until the earliest and runs each wake-up on the delivery queue)",
            threads: "one of its own (countdown-tick), asleep until the earliest due instant, for all countdowns",
            suspension: .keepsDeadline,
            wallClockJump: clock.followsWallClock ? .movesCountdown : .immune,
            capacity: nil,
            maximumDuration: maximumDuration,
            tolerance: tolerance)
    }

    /// `wall`, `continuous`, or with a tolerance `continuous~10ms`.
    package static func variant(clock: CountdownClock, tolerance: Duration) -> String {
        tolerance == .zero ? clock.name : "\(clock.name)~\(tolerance.text.filter { $0 != " " })"
    }

    /// The clock remaining time is read from.
    public var clock: CountdownClock { engine.mechanism.clock }
}

struct TimestampMechanism: CountdownMechanism {
    let tick: Duration
    let clock: CountdownClock
    let ticker: Ticker
    /// The monotonic clock the ticker's instants are on: the system's, or a virtual world's.
    let runtime: EngineRuntime

    /// `tolerance`: how late past a due instant the ticker may wake, to share its wake-ups.
    init(tick: Duration, clock: CountdownClock, tolerance: Duration = .zero, runtime: EngineRuntime) {
        self.tick = tick
        self.clock = clock
        self.runtime = runtime
        ticker = Ticker(tolerance: tolerance, runtime: runtime)
    }

    /// Reads `clock`, then the monotonic clock: two readings a few tens of nanoseconds apart,
    /// each about 30 ns here, on every start, pause, resume and batch of fires.
    ///
    /// In that order, a preemption between the two readings can only place the tick grid later
    /// than the deadline, never earlier: the ticks then come that much later and carry what is
    /// left when they are heard, and the finish stays on the deadline (the last fire is timed
    /// by the time left, not by the grid). Read the other way round, it would move the
    /// deadline after the grid's end: an extra tick, and a late finish. The skew of an
    /// unbroken pair is the same at the start and at every fire, so it cancels out.
    func now() -> Moment {
        let clockReading = clock.nanosecondsNow()
        return Moment(monotonic: runtime.monotonicInstant(), clock: clockReading)
    }

    typealias Progress = DeadlineTrack

    func bind(to engine: CountdownEngine<Self>) { ticker.bind(to: engine) }

    /// The ticker's wake-ups run on the delivery queue, after the drain that files the arms:
    /// a start leaves its first fire in the delivery pipeline beside its tick, and takes no ticker lock.
    /// A wake-up that comes while a drain lingers runs when the drain hands the queue back,
    /// within a turn (half a millisecond), however long the stream of events stays dense.
    var arming: ArmingStyle { .sharedDueQueue }

    func file(_ firstFires: ContiguousArray<DueItem>) { ticker.schedule(firstFires) }

    func shutdown() { ticker.stop() }
}
