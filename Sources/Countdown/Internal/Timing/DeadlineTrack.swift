/// Remaining time as the timestamp strategy keeps it: a deadline on a clock, and
/// remaining = deadline − now on every fire, so fires that never happened cost nothing.
///
/// Ticks stay on the monotonic grid start + k·T (moved by pauses). After a stall, missed grid
/// points are skipped, so a frozen process resumes with one catch-up tick, not a burst.
/// Kept in whole nanoseconds, and a pause kept in fields a paused countdown does not use, and
/// the tick not kept at all (the table hands it in): a million of these are a table's bulk, and
/// every 16 bytes of a place are 4 000 pages to fault in at a million countdowns.
struct DeadlineTrack: CountdownProgress {
    /// The deadline, on the progress's clock; ``paused`` while paused (a resume sets it again).
    private var deadline: Int64
    /// The least remaining told so far. A wall clock set back would otherwise make the
    /// remaining grow; the countdown is moved (it holds still) but never counts up. While
    /// paused, the remaining time the pause froze (never more than what was told).
    private var leastTold: Int64
    /// The next point of the tick grid that has not been ticked.
    private var nextGridPoint: MonotonicInstant
    /// Start + duration on the grid's clock (moved by pauses). When the duration is a whole
    /// number of ticks, the last grid point is the finish, never a tick: the other clock was
    /// read a few microseconds later and would otherwise leave a tick of a few microseconds.
    private var gridDeadline: MonotonicInstant
    /// While paused, when the pause began (the next fire means nothing then).
    private(set) var nextFire: MonotonicInstant

    /// The deadline of a paused countdown: no clock reads this far back.
    private static var paused: Int64 { .min }
    private var isPaused: Bool { deadline == Self.paused }

    init(duration: Duration, tick: TickLength, at now: Moment) {
        // Converted once: a conversion is an `Int128` division, on every start.
        let length = duration.nanoseconds, tickLength = tick.nanoseconds
        deadline = now.clock + length
        leastTold = length
        nextGridPoint = now.monotonic.adding(nanoseconds: tickLength)
        gridDeadline = now.monotonic.adding(nanoseconds: length)
        nextFire = min(nextGridPoint, gridDeadline)
    }

    private func unfrozen(at clock: Int64) -> Int64 {
        max(min(deadline &- clock, leastTold), 0)
    }

    func remaining(at now: Moment) -> Duration {
        .nanoseconds(isPaused ? leastTold : unfrozen(at: now.clock))
    }

    var nextIntervalIsShort: Bool { false }

    /// The next fire is within half a tick of the grid's end: the last grid point, or the
    /// deadline a fire before it aimed at.
    func nextFireMayFinish(tick: TickLength) -> Bool {
        nextFire.nanoseconds &+ UInt64(tick.nanoseconds) / 2 >= gridDeadline.nanoseconds
    }

    mutating func advance(at now: Moment, intervals _: Int, tick length: TickLength) -> ProgressStep {
        let tick = UInt64(length.nanoseconds)
        let remaining = unfrozen(at: now.clock)
        guard remaining > 0 else { return .finished }
        var gridPointDue = false
        if now.monotonic >= nextGridPoint {
            let missed = (now.monotonic.nanoseconds - nextGridPoint.nanoseconds) / tick
            let latestDue = nextGridPoint.nanoseconds + tick * missed
            nextGridPoint = MonotonicInstant(nanoseconds: latestDue + tick)
            gridPointDue = latestDue != gridDeadline.nanoseconds
            if gridPointDue { leastTold = remaining }
        }
        nextFire = min(nextGridPoint, MonotonicInstant(nanoseconds: now.monotonic.nanoseconds + UInt64(remaining)))
        return gridPointDue ? .tick(.nanoseconds(remaining)) : .quiet
    }

    mutating func told(_ remaining: Duration) {
        leastTold = min(leastTold, remaining.nanoseconds)
    }

    mutating func pause(at now: Moment) {
        guard !isPaused else { return }
        leastTold = unfrozen(at: now.clock)
        deadline = Self.paused
        nextFire = now.monotonic
    }

    mutating func resume(at now: Moment) {
        guard isPaused else { return }
        let pausedFor = now.monotonic - nextFire
        let remaining = leastTold
        deadline = now.clock + remaining
        nextGridPoint = nextGridPoint + pausedFor
        gridDeadline = gridDeadline + pausedFor
        nextFire = min(nextGridPoint, MonotonicInstant(nanoseconds: now.monotonic.nanoseconds + UInt64(remaining)))
    }
}
