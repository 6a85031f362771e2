/// Remaining time as the articles kept it: a counter that loses one tick per timer fire.
///
/// The counter believes only in fires. A fire that never happens (a frozen process) is
/// time that is never taken off, which is exactly what the suspension profile measures.
/// Between fires, the time since the last one is taken off only for reading, so a screen
/// that attaches mid-interval is told the truth and a pause mid-interval resumes mid-interval.
struct TickCount: CountdownProgress {
    let tick: Duration
    /// Remaining according to the fires counted so far.
    private var counted: Duration
    /// When the current interval began: the last fire (or the start), moved by pauses.
    private var intervalStart: MonotonicInstant
    /// How far into the current interval the countdown was paused; nil while running.
    private var pausedElapsed: Duration?

    init(duration: Duration, tick: Duration, now: MonotonicInstant) {
        self.tick = tick
        self.counted = duration
        self.intervalStart = now
    }

    /// What the next fire takes off: a tick, or what is left if that is less.
    private var step: Duration { min(tick, counted) }

    private func elapsedInInterval(at now: MonotonicInstant) -> Duration {
        let elapsed = pausedElapsed ?? (now - intervalStart)
        return min(max(elapsed, .zero), step)
    }

    func remaining(at now: Moment) -> Duration {
        counted - elapsedInInterval(at: now.monotonic)
    }

    var nextFire: MonotonicInstant { intervalStart + step }

    var nextIntervalIsShort: Bool { step < tick }

    mutating func advance(at moment: Moment, intervals: Int) -> ProgressStep {
        for _ in 0..<max(intervals, 1) where counted > .zero { counted -= step }
        intervalStart = moment.monotonic
        return counted > .zero ? .tick(counted) : .finished
    }

    mutating func pause(at now: Moment) {
        pausedElapsed = elapsedInInterval(at: now.monotonic)
    }

    mutating func resume(at now: Moment) {
        intervalStart = now.monotonic + (.zero - (pausedElapsed ?? .zero))
        pausedElapsed = nil
    }
}
