/// Remaining time as the timestamp strategy keeps it: a deadline on a clock, and
/// remaining = deadline − now on every fire, so fires that never happened cost nothing.
///
/// Ticks stay on the monotonic grid start + k·T (moved by pauses). After a stall, missed grid
/// points are skipped, so a frozen process resumes with one catch-up tick, not a burst.
struct DeadlineTrack: CountdownProgress {
    let clock: CountdownClock
    let tick: Duration
    /// The deadline, on `clock`.
    private var deadline: Duration
    /// The least remaining told so far. A wall clock set back would otherwise make the
    /// remaining grow; the countdown is moved (it holds still) but never counts up.
    private var leastTold: Duration
    /// The next point of the tick grid that has not been ticked.
    private var nextGridPoint: MonotonicInstant
    /// Start + duration on the grid's clock (moved by pauses). When the duration is a whole
    /// number of ticks, the last grid point is the finish, never a tick: the other clock was
    /// read a few microseconds later and would otherwise leave a tick of a few microseconds.
    private var gridDeadline: MonotonicInstant
    private var paused: (remaining: Duration, at: MonotonicInstant)?
    private(set) var nextFire: MonotonicInstant

    /// `now` is not used: the grid starts at a monotonic instant read together with `clock`.
    init(duration: Duration, tick: Duration, now _: MonotonicInstant, clock: CountdownClock) {
        let (now, clockNow) = Self.read(clock)
        self.clock = clock
        self.tick = tick
        self.deadline = clockNow + duration
        self.leastTold = duration
        self.nextGridPoint = now + tick
        self.gridDeadline = now + duration
        self.nextFire = min(nextGridPoint, now + duration)
    }

    private func unfrozenRemaining() -> Duration {
        max(min(deadline - clock.now(), leastTold), .zero)
    }

    func remaining(at now: MonotonicInstant) -> Duration {
        paused?.remaining ?? unfrozenRemaining()
    }

    var nextIntervalIsShort: Bool { false }

    mutating func advance(at now: MonotonicInstant, intervals _: Int) -> ProgressStep {
        let remaining = unfrozenRemaining()
        guard remaining > .zero else { return .finished }
        var gridPointDue = false
        if now >= nextGridPoint {
            let missed = Int64((now - nextGridPoint) / tick)
            let latestDue = nextGridPoint + tick * missed
            nextGridPoint = latestDue + tick
            gridPointDue = latestDue != gridDeadline
            if gridPointDue { leastTold = remaining }
        }
        nextFire = min(nextGridPoint, now + remaining)
        return gridPointDue ? .tick(remaining) : .quiet
    }

    mutating func told(_ remaining: Duration) {
        leastTold = min(leastTold, remaining)
    }

    mutating func pause(at _: MonotonicInstant) {
        let (now, clockNow) = Self.read(clock)
        paused = (max(min(deadline - clockNow, leastTold), .zero), now)
    }

    mutating func resume(at _: MonotonicInstant) {
        guard let paused else { return }
        let (now, clockNow) = Self.read(clock)
        deadline = clockNow + paused.remaining
        leastTold = paused.remaining
        nextGridPoint = nextGridPoint + (now - paused.at)
        gridDeadline = gridDeadline + (now - paused.at)
        nextFire = min(nextGridPoint, now + paused.remaining)
        self.paused = nil
    }

    /// Reads the monotonic clock and `clock` at one instant, as nearly as can be: a pair split
    /// by a preemption would misplace the deadline against the tick grid by the preemption's
    /// length (seen here under load: tens of milliseconds). A pair whose two readings of
    /// `clock` are far apart is read again.
    private static func read(_ clock: CountdownClock) -> (MonotonicInstant, Duration) {
        var attempts = 0
        while true {
            let before = clock.now()
            let now = MonotonicInstant.now
            let after = clock.now()
            attempts += 1
            if after - before < .microseconds(50) || attempts == 8 {
                return (now, before + (after - before) / 2)
            }
        }
    }
}
