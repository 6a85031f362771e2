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

    init(duration: Duration, tick: Duration, now: MonotonicInstant, clock: CountdownClock) {
        self.clock = clock
        self.tick = tick
        self.deadline = clock.now() + duration
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

    mutating func advance(at now: MonotonicInstant) -> ProgressStep {
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

    mutating func pause(at now: MonotonicInstant) {
        paused = (unfrozenRemaining(), now)
    }

    mutating func resume(at now: MonotonicInstant) {
        guard let paused else { return }
        deadline = clock.now() + paused.remaining
        leastTold = paused.remaining
        nextGridPoint = nextGridPoint + (now - paused.at)
        gridDeadline = gridDeadline + (now - paused.at)
        nextFire = min(nextGridPoint, now + paused.remaining)
        self.paused = nil
    }
}
