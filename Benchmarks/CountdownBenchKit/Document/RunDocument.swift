/// What `countdown-bench run` measured, as one typed document: what `--output` writes as
/// run.json, what every report renders, and what `compare` reads. `version` changes whenever a
/// field changes meaning; version 1 files are still read (``RunDocumentV1``).
struct RunDocument: Codable, Sendable {
    static let currentFormat = "countdown-bench.run"
    static let currentVersion = 2

    var format = currentFormat
    var version = currentVersion
    let machine: Machine
    /// When the run ended, ISO 8601.
    let date: String
    let arguments: [String]
    let options: Options
    /// The machine's baseline: the floor measured alone before each repeat.
    let floor: Floor
    /// The rest of the machine over every configuration's windows; nil in version 1 files.
    let load: MachineLoad?
    let configurations: [Configuration]
    /// The machine's memory, measured alone before each repeat; nil in files written before it
    /// was measured.
    var memory: MemoryLatency? = nil
    /// Each figure's unit, so that the JSON explains itself.
    var units: [Figure: FigureUnit] = Dictionary(uniqueKeysWithValues: Figure.allCases.map { ($0, $0.unit) })

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
        /// Tick samples each configuration collects at least, over its repeats (small N run
        /// rounds of countdowns); 0 in version 1 files.
        let minimumTickSamples: Int
        /// The keys' shape; nil in files written before it was recorded, whose keys were short.
        var keys: KeyShape? = nil

        /// The keys the run used.
        var keyShape: KeyShape { keys ?? .short }
    }

    struct Floor: Codable, Sendable {
        let summary: LatencySummary
        /// p99 in each repeat, ms.
        let repeatP99s: [Double]
        let histogram: LatencyHistogram
    }

    struct Configuration: Codable, Sendable {
        let backend: String
        let starts: StartPattern
        let count: Int
        /// Rounds of N countdowns run one after another in each repeat, so that small N collect
        /// enough ticks.
        let rounds: Int
        let figures: [Figure: FigureValue]
        /// The worst repeat's cut-off, every repeat's breaches.
        let outcome: Outcome
        /// The repeats' tick p99s disagree by more than 2×.
        let isNoisy: Bool
        /// In some repeat the floor thread in this configuration's window had a p99 more than 4×
        /// the floor's p99 alone: the machine, not only the backend, was late then.
        let isDisturbed: Bool
        /// The floor thread that ran through this configuration's windows, every repeat pooled;
        /// nil in version 1 files.
        let windowFloor: LatencySummary?
        let load: MachineLoad?
        let repeats: [Repeat]
        /// Every repeat's samples merged; empty in version 1 files.
        let histograms: Histograms?

        var id: String { "\(backend) \(starts.rawValue) N=\(count)" }

        /// The figure's headline value, nil when not measured.
        subscript(figure: Figure) -> FigureValue? { figures[figure] }
    }

    struct Repeat: Codable, Sendable {
        /// Each figure from this repeat's own samples.
        let figures: [Figure: Double]
        let lowerBounds: [Figure]
        let outcome: Outcome
        let counts: Counts
        let load: MachineLoad?
        /// The floor's p99 in this repeat's windows, ms.
        let windowFloorP99: Double?
    }

    struct Counts: Codable, Sendable, Equatable {
        /// Over every round.
        let countdowns: Int
        let started: Int
        let finished: Int
        let notStarted: Int
        let neverTicked: Int
        let ticks: Int
        let repeatedGridPoints: Int
        let startPhaseMs: Double
        let windowMs: Double
        let rounds: Int
        let hitTimeLimit: Bool
        /// Threads in the process before the scheduler was made, and at most while it ran
        /// (idle pool threads from earlier configurations included).
        let baselineThreads: Int
        let peakThreads: Int
        let churnFilled: Int
        let churnFillMs: Double
    }

    struct Histograms: Codable, Sendable {
        let tickLateness: LatencyHistogram
        let finishError: LatencyHistogram
        let startDelay: LatencyHistogram
        let windowFloor: LatencyHistogram
    }

    /// Whether any configuration ran on a busy machine.
    var ranOnBusyMachine: Bool { configurations.contains { $0.load?.isBusy == true } }
}

/// How a configuration's N starts are placed in time.
enum StartPattern: String, Codable, Sendable, CaseIterable {
    /// Evenly over one tick, as users' taps arrive.
    case spread
    /// All N at once, as fast as one thread can call `start`: the thundering herd.
    case burst
}
