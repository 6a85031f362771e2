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
    /// At the background: the remaining time then (negative when not marked), and the boot
    /// clock's reading, for the articles' fix at the foreground.
    private var backgroundRemaining: Int64 = -1
    private var backgroundBoot: Int64 = 0

    init(duration: Duration, tick: TickLength, at now: Moment) {
        self.init(duration: duration, tick: tick.duration, now: now.monotonic)
    }

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

    /// `tick`: the table's; a count keeps its own, which its arithmetic reads everywhere.
    mutating func advance(at moment: Moment, intervals: Int, tick _: TickLength) -> ProgressStep {
        for _ in 0..<max(intervals, 1) where counted > .zero { counted -= step }
        intervalStart = moment.monotonic
        return counted > .zero ? .tick(counted) : .finished
    }

    mutating func pause(at now: Moment) {
        pausedElapsed = elapsedInInterval(at: now.monotonic)
    }

    static var countsTicks: Bool { true }

    /// The articles' fix: note the time at the background; a second call keeps the first.
    mutating func enteredBackground(at now: Moment, boot: Int64) {
        guard pausedElapsed == nil, backgroundRemaining < 0 else { return }
        backgroundRemaining = remaining(at: now).nanoseconds
        backgroundBoot = boot
    }

    /// Takes off the time that passed since the background and the fires in between did not
    /// count: the remaining time becomes what it was then minus the boot clock's elapsed time.
    /// The counter moves onto the grid it would have kept (its values stay `counted − k·T`),
    /// so the following fires tick on it. Never counts up; a paused countdown is left alone.
    mutating func enteredForeground(at now: Moment, boot: Int64) -> ProgressStep? {
        let marked = backgroundRemaining
        backgroundRemaining = -1
        guard marked >= 0, pausedElapsed == nil else { return nil }
        let truth = marked - max(boot - backgroundBoot, 0)
        let current = remaining(at: now).nanoseconds
        guard truth < current else { return nil }
        guard truth > 0 else {
            counted = .zero
            return .finished
        }
        // The grid point at or above the true remaining time, and how far past it we are.
        let pastGridPoint = (counted.nanoseconds - truth) % tick.nanoseconds
        counted = .nanoseconds(truth + pastGridPoint)
        intervalStart = now.monotonic + .nanoseconds(-pastGridPoint)
        return .tick(.nanoseconds(truth))
    }

    mutating func resume(at now: Moment) {
        intervalStart = now.monotonic + (.zero - (pausedElapsed ?? .zero))
        pausedElapsed = nil
    }
}
