/// What `countdown-bench run --output` writes as run.json, and what `compare` reads.
/// `version` changes whenever a field changes meaning; `compare` refuses other versions.
struct RunDocument: Codable, Sendable {
    static let currentFormat = "countdown-bench.run"
    static let currentVersion = 1

    var format = currentFormat
    var version = currentVersion
    let machine: Machine
    /// When the run ended, ISO 8601.
    let date: String
    let arguments: [String]
    let options: Options
    let floor: Floor
    let configurations: [Configuration]

    struct Options: Codable, Sendable {
        let backends: [String]
        let counts: [Int]
        let starts: [StartPattern]
        let tickMs: Double
        let durationMs: Double
        let repeats: Int
        let graceMs: Double
        let floorPeriodUs: Double
        let floorWakeUps: Int
        let churnSamples: Int
    }

    struct Floor: Codable, Sendable {
        /// Per repeat: p50…max of the wake-up lateness, in ms.
        let repeats: [[String: Double]]
        let summary: [String: Spread]
        let histogram: LatencyHistogram
    }

    struct Configuration: Codable, Sendable {
        let backend: String
        let starts: StartPattern
        let count: Int
        /// Each figure (``Figure/name``) over the repeats.
        let summary: [String: Spread]
        /// Figures that are lower bounds in at least one repeat (the time limit cut it off).
        let atLeast: [String]
        /// What happened, in words: "complete", or what the time limit cut off.
        let outcome: String
        let repeats: [Repeat]

        var id: String { "\(backend) \(starts.rawValue) N=\(count)" }
    }

    struct Repeat: Codable, Sendable {
        let figures: [String: Double]
        let atLeast: [String]
        let outcome: String
        let counts: Counts
        let histograms: Histograms
    }

    struct Counts: Codable, Sendable {
        let countdowns: Int
        let started: Int
        let finished: Int
        let notStarted: Int
        let neverTicked: Int
        let ticks: Int
        let skippedTicks: Int
        let repeatedGridPoints: Int
        let earlyEvents: Int
        let earlyFinishes: Int
        let doubledFinishes: Int
        let eventsAfterFinish: Int
        let startErrors: [String: Int]
        let startPhaseMs: Double
        let windowMs: Double
        let hitTimeLimit: Bool
        /// Threads in the process before the scheduler was made, and at most while it ran
        /// (idle pool threads from earlier configurations included).
        let baselineThreads: Int
        let peakThreads: Int
        /// The earliest event before its ideal time, ms (negative); 0 when none was early.
        let earliestMs: Double
        let churnFilled: Int
        let churnFillMs: Double
    }

    struct Histograms: Codable, Sendable {
        let tickLateness: LatencyHistogram
        let finishError: LatencyHistogram
        let startDelay: LatencyHistogram
    }
}
