/// A figure the benchmark reports for each configuration: its name in the JSON, CSV and
/// `compare`, its unit, and below what change it is noise. Every figure is better lower.
struct Figure: Sendable {
    let name: String
    let unit: String
    /// A change smaller than this (in the figure's unit) is never called a regression.
    let noise: Double

    static let tickP50 = Figure(name: "tick.p50.ms", unit: "ms", noise: 0.1)
    static let tickP90 = Figure(name: "tick.p90.ms", unit: "ms", noise: 0.1)
    static let tickP99 = Figure(name: "tick.p99.ms", unit: "ms", noise: 0.2)
    static let tickP999 = Figure(name: "tick.p99.9.ms", unit: "ms", noise: 0.5)
    static let tickMax = Figure(name: "tick.max.ms", unit: "ms", noise: 1)
    static let floorRatio = Figure(name: "tick.p99.floor-ratio", unit: "×", noise: 1)
    static let finishP50 = Figure(name: "finish.p50.ms", unit: "ms", noise: 0.1)
    static let finishP99 = Figure(name: "finish.p99.ms", unit: "ms", noise: 0.2)
    static let startDelayP50 = Figure(name: "start-delay.p50.ms", unit: "ms", noise: 0.1)
    static let startDelayP99 = Figure(name: "start-delay.p99.ms", unit: "ms", noise: 0.2)
    static let lateStarts = Figure(name: "late-starts.percent", unit: "%", noise: 1)
    static let cpu = Figure(name: "cpu.percent", unit: "% of a core", noise: 2)
    /// CPU while the N `start` calls were made, the starter's pacing included.
    static let cpuStartPhase = Figure(name: "cpu.start-phase.percent", unit: "% of a core", noise: 2)
    /// CPU from the last start to the last finish: counting down alone.
    static let cpuSteady = Figure(name: "cpu.steady.percent", unit: "% of a core", noise: 2)
    /// Steady-state CPU divided by the events delivered in it: the figure that travels between
    /// machines, and to a phone's battery.
    static let cpuPerEvent = Figure(name: "cpu.per-event.us", unit: "µs", noise: 0.2)
    static let contextSwitches = Figure(name: "context-switches.per-s", unit: "/s", noise: 200)
    /// Threads that used at least 0.1 ms of CPU while the configuration ran, the benchmark's
    /// own included (its starter, sampler and delivery queue).
    static let threads = Figure(name: "threads.busy", unit: "", noise: 2)
    static let poolWait = Figure(name: "pool-wait.p99.ms", unit: "ms", noise: 0.5)
    static let rss = Figure(name: "rss.bytes-per-countdown", unit: "B", noise: 64)
    static let startCall = Figure(name: "start.median.us", unit: "µs", noise: 0.3)
    static let startCallP99 = Figure(name: "start.p99.us", unit: "µs", noise: 1)
    static let cancelCall = Figure(name: "cancel.median.us", unit: "µs", noise: 0.3)
    static let cancelCallP99 = Figure(name: "cancel.p99.us", unit: "µs", noise: 1)

    static let all: [Figure] = [
        tickP50, tickP90, tickP99, tickP999, tickMax, floorRatio, finishP50, finishP99, startDelayP50,
        startDelayP99, lateStarts, cpu, cpuStartPhase, cpuSteady, cpuPerEvent, contextSwitches, threads, poolWait, rss, startCall, startCallP99,
        cancelCall, cancelCallP99,
    ]
}

/// A figure over the repeats of a configuration: the median, and the spread.
struct Spread: Codable, Sendable, Equatable {
    let median: Double
    let min: Double
    let max: Double

    init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted[0]
        max = sorted[sorted.count - 1]
    }
}
