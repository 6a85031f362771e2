/// How a backend knows how much time is left: the strategy's notion of time, kept apart from
/// the timer that wakes it up.
protocol CountdownProgress: Sendable {
    /// A countdown of `duration` starting at `now`, ticking every `tick`.
    init(duration: Duration, tick: TickLength, at now: Moment)

    /// Time left now; frozen while paused; zero once the deadline has passed.
    func remaining(at now: Moment) -> Duration

    /// When the next fire is due. Meaningless while paused.
    var nextFire: MonotonicInstant { get }

    /// Whether the fire at ``nextFire`` may be the finish: a hint, so that a batch of fires
    /// fetches ahead only what a finish touches (the key's entry in the index). `tick`: the
    /// table's, the one it was made with.
    func nextFireMayFinish(tick: TickLength) -> Bool

    /// True when the interval up to ``nextFire`` is shorter than a tick (the last piece of a
    /// duration that is not a whole number of ticks), so a repeating timer must be moved.
    var nextIntervalIsShort: Bool { get }

    /// A fire happened at `now`: account for it. `intervals` is how many tick intervals the
    /// fire stands for (more than one when a timer reports intervals it missed); a progress
    /// that reads a clock ignores it. `tick`: the table's, the one it was made with (handed in,
    /// not kept: every countdown of a table has the same, and a progress kept in each of ten
    /// million places is ten million copies of it).
    mutating func advance(at now: Moment, intervals: Int, tick: TickLength) -> ProgressStep

    /// Records a remaining time told to an observer outside `advance` (an attach), so later
    /// ticks never carry more.
    mutating func told(_ remaining: Duration)

    mutating func pause(at now: Moment)

    /// After this, ``nextFire`` is the first fire after the pause.
    mutating func resume(at now: Moment)

    /// Whether the progress loses time while the process is frozen (it counts fires), and so
    /// needs the app's lifecycle hooks. False: the hooks are skipped, at no cost.
    static var countsTicks: Bool { get }

    /// The app went to the background at `now` (`boot`: nanoseconds of the boot clock, which
    /// counts through a freeze and the device's sleep). Called for running countdowns only.
    mutating func enteredBackground(at now: Moment, boot: Int64)

    /// The app came back: the step to tell the observer (a corrected tick, or the finish), or
    /// nil when nothing changed. After a tick, ``nextFire`` is on the corrected grid.
    mutating func enteredForeground(at now: Moment, boot: Int64) -> ProgressStep?
}

enum ProgressStep: Equatable {
    /// Tell the observer this much remains.
    case tick(Duration)
    /// Woken for the deadline, but the clock says it has not passed yet: nothing to tell,
    /// sleep again until ``CountdownProgress/nextFire``.
    case quiet
    case finished
}

extension CountdownProgress {
    init(duration: Duration, tick: Duration, at now: Moment) {
        self.init(duration: duration, tick: TickLength(tick), at: now)
    }

    func nextFireMayFinish(tick: TickLength) -> Bool { true }
    mutating func told(_ remaining: Duration) {}

    static var countsTicks: Bool { false }
    mutating func enteredBackground(at now: Moment, boot: Int64) {}
    mutating func enteredForeground(at now: Moment, boot: Int64) -> ProgressStep? { nil }
}
