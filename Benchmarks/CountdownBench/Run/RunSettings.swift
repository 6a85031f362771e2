import Countdown

/// What `countdown-bench run` sweeps, and how long each configuration may take.
struct RunSettings: Sendable {
    var backends: [CountdownBackend] = CountdownBackend.all
    var counts: [Int] = [1, 10, 100, 1_000, 10_000, 100_000]
    var patterns: [StartPattern] = StartPattern.allCases
    var tick: Duration = .milliseconds(200)
    var duration: Duration = .seconds(1)
    var repeats = 3
    /// How long past a configuration's last expected finish it may run before it is cut off
    /// and what had not happened is counted as late (a lower bound).
    var grace: Duration = .seconds(1)
    /// The floor: one thread waking every `floorPeriod`, `floorWakeUps` times per repeat.
    var floorPeriod: Duration = .milliseconds(1)
    var floorWakeUps = 1000
    /// The start/cancel probe: at most this many cancel + start pairs with N countdowns active,
    /// and at most this long to fill the scheduler to N first.
    var churnSamples = 1000
    var churnFillLimit: Duration = .seconds(10)

    /// `--quick`: a smoke run for CI, under 30 s on a 2-core machine.
    static var quick: RunSettings {
        var settings = RunSettings()
        settings.counts = [10, 1_000]
        settings.tick = .milliseconds(100)
        settings.duration = .milliseconds(300)
        settings.repeats = 1
        settings.grace = .milliseconds(500)
        settings.floorWakeUps = 300
        settings.churnSamples = 200
        settings.churnFillLimit = .seconds(2)
        return settings
    }

    /// A configuration's time limit, from its first start: the start phase (one tick when
    /// spread), the duration, and the grace.
    func timeLimit(for pattern: StartPattern) -> Duration {
        (pattern == .spread ? tick : .zero) + duration + grace
    }
}

/// How a configuration's N starts are placed in time.
enum StartPattern: String, Codable, Sendable, CaseIterable {
    /// Evenly over one tick, as users' taps arrive.
    case spread
    /// All N at once, as fast as one thread can call `start`: the thundering herd.
    case burst
}
