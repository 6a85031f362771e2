import Countdown

/// What `countdown-bench run` sweeps, and how long each configuration may take.
struct RunSettings: Sendable {
    var backends: [CountdownBackend] = CountdownBackend.all
    var counts: [Int] = [1, 10, 100, 1_000, 10_000]
    var patterns: [StartPattern] = StartPattern.allCases
    /// 10 ms: one countdown of 1 s gives 99 tick samples, so that N = 1 resolves a p99.9 in a few
    /// rounds and the default run fits in 6 minutes. The load is N × 100 events a second.
    var tick: Duration = .milliseconds(10)
    var duration: Duration = .seconds(1)
    var repeats = 3
    /// Tick samples each configuration collects at least, over its repeats: a configuration
    /// whose N countdowns give fewer runs rounds of them, one after another.
    var minimumTickSamples = 2000
    /// How long past a round's last expected finish it may run before it is cut off and what
    /// had not happened is counted as late (a lower bound).
    var grace: Duration = .seconds(1)
    /// The floor: one thread waking every `floorPeriod`, `floorWakeUps` times alone per repeat,
    /// and through every configuration's window.
    var floorPeriod: Duration = .milliseconds(1)
    var floorWakeUps = 1000
    /// The start/cancel probe: at most this many cancel + start pairs with N countdowns active,
    /// and at most this long to fill the scheduler to N first.
    var churnSamples = 1000
    var churnFillLimit: Duration = .seconds(10)
    /// Keys like real ones (20–32 bytes) unless told otherwise.
    var keys: KeyShape = .real

    /// `--quick`: a smoke run for CI, under 30 s on a 2-core machine. Its percentiles rest on
    /// few samples and say so.
    static var quick: RunSettings {
        var settings = RunSettings()
        settings.counts = [10, 1_000]
        settings.duration = .milliseconds(300)
        settings.repeats = 1
        settings.minimumTickSamples = 500
        settings.grace = .milliseconds(500)
        settings.floorWakeUps = 300
        settings.churnSamples = 200
        settings.churnFillLimit = .seconds(2)
        return settings
    }

    /// Grid points strictly before the deadline: the ticks one countdown delivers.
    var ticksPerCountdown: Int {
        max(Int((duration.nanoseconds - 1) / tick.nanoseconds), 0)
    }

    /// Rounds of `count` countdowns each repeat runs, so that the repeats together collect
    /// `minimumTickSamples` (at most 1 000 rounds).
    func rounds(for count: Int) -> Int {
        let perRepeat = (minimumTickSamples + repeats - 1) / repeats
        let perRound = count * ticksPerCountdown
        guard perRound > 0 else { return 1 }
        return min(max((perRepeat + perRound - 1) / perRound, 1), 1000)
    }

    /// A round's time limit, from its first start: the start phase (one tick when spread), the
    /// duration, and the grace.
    func timeLimit(for pattern: StartPattern) -> Duration {
        (pattern == .spread ? tick : .zero) + duration + grace
    }
}
