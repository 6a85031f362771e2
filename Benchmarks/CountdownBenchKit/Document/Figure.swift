/// A figure the benchmark reports for each configuration: its name in the JSON, CSV and
/// `compare`, its unit, how many samples resolve it, and below what change it is noise.
/// Every figure is better lower.
enum Figure: String, CaseIterable, Codable, CodingKeyRepresentable, Sendable {
    case tickP50 = "tick.p50.ms"
    case tickP90 = "tick.p90.ms"
    case tickP99 = "tick.p99.ms"
    case tickP999 = "tick.p99.9.ms"
    case tickMax = "tick.max.ms"
    /// Tick p99 over the p99 of a floor thread running in the same windows.
    case floorRatio = "tick.p99.floor-ratio"
    case finishP50 = "finish.p50.ms"
    case finishP99 = "finish.p99.ms"
    case startDelayP50 = "start-delay.p50.ms"
    case startDelayP99 = "start-delay.p99.ms"
    case lateStarts = "late-starts.percent"
    case cpu = "cpu.percent"
    /// CPU while the N `start` calls were made, the starter's pacing included.
    case cpuStartPhase = "cpu.start-phase.percent"
    /// CPU from the last start to the last finish: counting down alone.
    case cpuSteady = "cpu.steady.percent"
    /// Steady-state CPU divided by the events delivered in it: the figure that travels between
    /// machines, and to a phone's battery.
    case cpuPerEvent = "cpu.per-event.us"
    case contextSwitches = "context-switches.per-s"
    /// The scheduler's own wake-ups a second, steady state (voluntary context switches, the
    /// benchmark's own taken off): what a phone's battery pays for beyond the events.
    case wakeUps = "wake-ups.per-s"
    /// Steady-state CPU divided by those wake-ups.
    case cpuPerWakeUp = "cpu.per-wake-up.us"
    /// A floor thread's CPU per `clock_nanosleep` wake-up in the same windows: the machine's
    /// own cost of a wake-up.
    case floorCPUPerWakeUp = "floor.cpu.per-wake-up.us"
    /// ``cpuPerWakeUp`` over ``floorCPUPerWakeUp``: how close the scheduler is to the machine.
    case wakeUpFloorRatio = "cpu.per-wake-up.floor-ratio"
    /// Threads that used at least 0.1 ms of CPU while the configuration ran, the benchmark's
    /// own included (its starter, sampler, floor and delivery queue).
    case threads = "threads.busy"
    case poolWait = "pool-wait.p99.ms"
    case rss = "rss.bytes-per-countdown"
    case startCall = "start.median.us"
    case startCallP99 = "start.p99.us"
    case cancelCall = "cancel.median.us"
    case cancelCallP99 = "cancel.p99.us"
    /// The same keys, in the same order, put into a Swift `Dictionary` in the same minute, each
    /// with an entry allocated as a start allocates its observer's: the least a keyed `start`
    /// does, done by Swift's own hash table on this machine.
    case startFloor = "start.floor.median.us"
    /// The same keys removed from that `Dictionary`: the least a keyed `cancel` does.
    case cancelFloor = "cancel.floor.median.us"
    /// ``startCall`` over ``startFloor``: how close `start` is to a `Dictionary`'s insert.
    case startFloorRatio = "start.floor-ratio"
    /// ``cancelCall`` over ``cancelFloor``.
    case cancelFloorRatio = "cancel.floor-ratio"

    var name: String { rawValue }

    /// The machine's own figure, measured beside the backend (the floor thread's): it tells how
    /// the machine changed between two runs, never how the backend did.
    var describesMachine: Bool {
        switch self {
        case .floorCPUPerWakeUp, .startFloor, .cancelFloor: true
        default: false
        }
    }

    /// Divided by the machine's own figure: it moves when the machine's cost moves, and its
    /// numerator (``cpuPerWakeUp``, ``startCall``, ``cancelCall``) says on its own how the
    /// backend did.
    var dividesByMachine: Bool {
        switch self {
        case .wakeUpFloorRatio, .startFloorRatio, .cancelFloorRatio: true
        default: false
        }
    }

    var unit: FigureUnit {
        switch self {
        case .tickP50, .tickP90, .tickP99, .tickP999, .tickMax, .finishP50, .finishP99, .startDelayP50,
             .startDelayP99, .poolWait:
            .milliseconds
        case .floorRatio: .ratio
        case .lateStarts: .percent
        case .cpu, .cpuStartPhase, .cpuSteady: .percentOfCore
        case .cpuPerEvent, .startCall, .startCallP99, .cancelCall, .cancelCallP99, .cpuPerWakeUp, .floorCPUPerWakeUp,
             .startFloor, .cancelFloor:
            .microseconds
        case .contextSwitches, .wakeUps: .perSecond
        case .wakeUpFloorRatio, .startFloorRatio, .cancelFloorRatio: .ratio
        case .threads: .count
        case .rss: .bytes
        }
    }

    /// A change smaller than this (in the figure's unit) is never called a regression.
    var noise: Double {
        switch self {
        case .tickP50, .tickP90, .finishP50, .startDelayP50: 0.1
        case .tickP99, .finishP99, .startDelayP99: 0.2
        case .tickP999, .poolWait: 0.5
        case .tickMax, .floorRatio, .lateStarts: 1
        case .cpu, .cpuStartPhase, .cpuSteady, .threads: 2
        case .cpuPerEvent: 0.2
        case .contextSwitches, .wakeUps: 200
        case .cpuPerWakeUp, .floorCPUPerWakeUp: 2
        case .wakeUpFloorRatio: 0.25
        case .rss: 64
        case .startCall, .cancelCall, .startFloor, .cancelFloor: 0.3
        case .startFloorRatio, .cancelFloorRatio: 0.5
        case .startCallP99, .cancelCallP99: 1
        }
    }

    /// The percentile this figure reads from a histogram, if it is one.
    var percentile: Double? {
        switch self {
        case .tickP50, .finishP50, .startDelayP50, .startCall, .cancelCall, .startFloor, .cancelFloor,
             .startFloorRatio, .cancelFloorRatio:
            50
        case .tickP90: 90
        case .tickP99, .finishP99, .startDelayP99, .poolWait, .startCallP99, .cancelCallP99, .floorRatio: 99
        case .tickP999: 99.9
        case .tickMax: 100
        default: nil
        }
    }

    /// Samples below which the figure is not resolved: a p99 needs 100 (else it is the largest
    /// of a few), a p99.9 1 000. A maximum is what it is at any count.
    var samplesNeeded: Int {
        switch percentile {
        case 99.9?: 1000
        case 99?: 100
        case 90?: 10
        default: 1
        }
    }
}
