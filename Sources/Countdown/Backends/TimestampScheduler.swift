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
/// order beside a 4-ary heap), a wake-up handles everything due under one lock and hands the
/// delivery queue one batch, and an optional `tolerance` lets countdowns due close together
/// share a wake-up.
public final class TimestampScheduler: KeyedCountdownScheduler, @unchecked Sendable {
    // `@unchecked Sendable` restated, as Swift 6 asks of a subclass: see `KeyedCountdownScheduler`.
    private let table: KeyedCountdowns<TimestampMechanism>

    /// - Parameters:
    ///   - clock: what remaining time is read from: ``CountdownClock/wall`` (default)
    ///     or ``CountdownClock/continuous``, or a custom clock (a test clock that jumps).
    ///   - tolerance: how late a tick may come by design, as `Timer.tolerance`: never early,
    ///     at most this late, so that countdowns due within it share one wake-up. Zero (the
    ///     default) wakes for every distinct due instant; only in a stream that has stayed dense
    ///     for 10 ms (a million countdowns, an instant due every microsecond) are wake-ups held
    ///     50 µs apart, Linux's own timer slack, and an instant due sooner waits for the next.
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
        table = KeyedCountdowns(
            settings: settings,
            mechanism: TimestampMechanism(
                tick: tickInterval, clock: clock,
                ticker: Ticker(tolerance: tolerance, queue: settings.deliveryQueue)))
        super.init(
            profile: Self.profile(clock: clock, tolerance: tolerance, maximumDuration: maximumDuration), table: table)
    }

    /// What a scheduler made with these arguments declares, without making one.
    public static func profile(
        clock: CountdownClock = .wall, tolerance: Duration = .zero,
        maximumDuration: Duration = CountdownLimits.defaultMaximumDuration
    ) -> CountdownProfile {
        CountdownProfile(
            name: "timestamp",
            variant: variant(clock: clock, tolerance: tolerance),
            mechanism: "a deadline per countdown; remaining = deadline − \(clock.name) clock now, "
                + "at ticks from one shared ticker (due times in filing order beside a 4-ary heap, one DispatchSourceTimer on the delivery queue)",
            threads: "none of its own: one dispatch timer, on the delivery queue, for all countdowns",
            suspension: .keepsDeadline,
            wallClockJump: clock.followsWallClock ? .movesCountdown : .immune,
            capacity: nil,
            maximumDuration: maximumDuration,
            tolerance: tolerance)
    }

    /// `wall`, `continuous`, or with a tolerance `continuous~10ms`.
    public static func variant(clock: CountdownClock, tolerance: Duration) -> String {
        tolerance == .zero ? clock.name : "\(clock.name)~\(tolerance.text.filter { $0 != " " })"
    }

    /// The clock remaining time is read from.
    public var clock: CountdownClock { table.mechanism.clock }
}

struct TimestampMechanism: CountdownMechanism {
    let tick: Duration
    let clock: CountdownClock
    let ticker: Ticker

    /// Reads the monotonic clock and `clock` at one instant, as nearly as can be: a pair split
    /// by a preemption would misplace the deadline against the tick grid by the preemption's
    /// length (tens of milliseconds under load). A pair whose two readings of `clock` are far
    /// apart is read again.
    func now() -> Moment {
        var attempts = 0
        while true {
            let before = clock.nanosecondsNow()
            let now = MonotonicInstant.now
            let after = clock.nanosecondsNow()
            attempts += 1
            if after &- before < 50_000 || attempts == 8 {
                return Moment(monotonic: now, clock: before &+ (after &- before) / 2)
            }
        }
    }

    typealias Progress = DeadlineTrack

    func bind(to table: KeyedCountdowns<Self>) { ticker.bind(to: table) }

    func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant, table: KeyedCountdowns<Self>) {
        ticker.schedule(DueItem(due: firstFire, index: id.index, arm: id.arm))
    }

    /// Nothing to release: the queued item pops at its time and is found stale.
    func disarm(_ handle: Void) {}

    /// The ticker finds a countdown by its place and arm: there is nothing to keep.
    var keepsHandles: Bool { false }

    /// Its wake-ups run on the delivery queue: one that comes while a drain lingers runs when
    /// the drain ends, within a gather.
    var deliveryMayLinger: Bool { true }

    func shutdown() { ticker.stop() }
}
