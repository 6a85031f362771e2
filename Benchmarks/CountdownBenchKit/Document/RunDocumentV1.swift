/// A run.json of format version 1 (figures as medians over the repeats, keyed by name; the
/// outcome in words; a histogram per repeat), as `compare` and `report` still read it, and its
/// upgrade to the current document: percentiles pooled from the repeats' histograms, the rest
/// from the medians. What version 1 did not measure (the floor in each window, the machine's
/// load, sample counts of one-off figures) stays empty.
struct RunDocumentV1: Decodable {
    let machine: Machine
    let date: String
    let arguments: [String]
    let options: Options
    let floor: Floor
    let configurations: [Configuration]

    /// The current options less `minimumTickSamples`, which version 1 did not have.
    struct Options: Decodable {
        let backends: [String]
        let counts: [Int]
        let starts: [StartPattern]
        let tickMs, durationMs, graceMs, floorPeriodUs: Double
        let repeats, floorWakeUps, churnSamples: Int
    }

    struct Floor: Decodable {
        let repeats: [[String: Double]]
        let histogram: LatencyHistogram
    }

    struct Configuration: Decodable {
        let backend: String
        let starts: StartPattern
        let count: Int
        let summary: [String: Spread]
        let atLeast: [String]
        let outcome: String
        let repeats: [Repeat]
    }

    struct Repeat: Decodable {
        let figures: [String: Double]
        let atLeast: [String]
        let outcome: String
        let counts: Counts
        let histograms: Histograms
    }

    struct Counts: Decodable {
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
        let baselineThreads: Int
        let peakThreads: Int
        let earliestMs: Double
        let churnFilled: Int
        let churnFillMs: Double
    }

    struct Histograms: Decodable {
        let tickLateness: LatencyHistogram
        let finishError: LatencyHistogram
        let startDelay: LatencyHistogram
    }

    var upgraded: RunDocument {
        var floor = floor.histogram
        if floor.isEmpty { floor = LatencyHistogram() }
        return RunDocument(
            machine: machine, date: date, arguments: arguments,
            options: .init(
                backends: options.backends, counts: options.counts, starts: options.starts, tickMs: options.tickMs,
                durationMs: options.durationMs, repeats: options.repeats, graceMs: options.graceMs,
                floorPeriodUs: options.floorPeriodUs, floorWakeUps: options.floorWakeUps,
                churnSamples: options.churnSamples, minimumTickSamples: 0),
            floor: .init(
                summary: LatencySummary(floor), repeatP99s: self.floor.repeats.compactMap { $0["p99.ms"] }, histogram: floor),
            load: nil, configurations: configurations.map { upgrade($0) })
    }

    private func upgrade(_ c: Configuration) -> RunDocument.Configuration {
        var pooled = RepeatSamples.Histograms()
        for r in c.repeats {
            pooled.tickLateness.merge(r.histograms.tickLateness)
            pooled.finishError.merge(r.histograms.finishError)
            pooled.startDelay.merge(r.histograms.startDelay)
        }
        let multiple = c.repeats.count > 1
        var figures: [Figure: FigureValue] = [:]
        let readings = ConfigurationSummary.readings(pooled, tick: UInt64(options.tickMs * 1e6))
        for figure in Figure.allCases {
            let spread = c.summary[figure.name]
            if let reading = readings[figure], figure != .floorRatio {
                figures[figure] = FigureValue(
                    value: reading.value, samples: reading.samples, isLowerBound: reading.isLowerBound,
                    isResolved: reading.samples >= figure.samplesNeeded, repeats: multiple ? spread : nil)
            } else if let spread {
                figures[figure] = FigureValue(
                    value: spread.median, samples: c.repeats.count, isLowerBound: c.atLeast.contains(figure.name),
                    isResolved: true, repeats: multiple ? spread : nil)
            }
        }
        let repeats = c.repeats.map { r in
            let k = r.counts
            return RunDocument.Repeat(
                figures: Dictionary(uniqueKeysWithValues: r.figures.compactMap { name, value in Figure(rawValue: name).map { ($0, value) } }),
                lowerBounds: r.atLeast.compactMap(Figure.init(rawValue:)), outcome: outcome(k, r.outcome),
                counts: .init(
                    countdowns: k.countdowns, started: k.started, finished: k.finished, notStarted: k.notStarted,
                    neverTicked: k.neverTicked, ticks: k.ticks, repeatedGridPoints: k.repeatedGridPoints,
                    startPhaseMs: k.startPhaseMs, windowMs: k.windowMs, rounds: 1, hitTimeLimit: k.hitTimeLimit,
                    baselineThreads: k.baselineThreads, peakThreads: k.peakThreads, churnFilled: k.churnFilled,
                    churnFillMs: k.churnFillMs),
                load: nil, windowFloorP99: nil)
        }
        let p99s = c.summary[Figure.tickP99.name]
        return RunDocument.Configuration(
            backend: c.backend, starts: c.starts, count: c.count, rounds: 1, figures: figures,
            outcome: .combined(repeats.map(\.outcome)), isNoisy: multiple && (p99s?.ratio ?? 1) > ConfigurationSummary.noisyRatio,
            isDisturbed: false,
            windowFloor: nil, load: nil, repeats: repeats,
            histograms: .init(
                tickLateness: pooled.tickLateness, finishError: pooled.finishError, startDelay: pooled.startDelay,
                windowFloor: .init()))
    }

    /// Version 1 kept the outcome in words; its counts give back what the words said.
    private func outcome(_ k: Counts, _ words: String) -> Outcome {
        var o = Outcome()
        if k.hitTimeLimit || k.notStarted > 0 {
            o.cutOff = .init(
                limitMs: options.durationMs + options.graceMs, finished: k.finished, countdowns: k.countdowns,
                notStarted: k.notStarted, startPhaseMs: k.startPhaseMs, lateStartsPercent: nil, startDelayP50Ms: nil,
                startDelayIsLowerBound: false)
        }
        o.skippedTicks = k.skippedTicks
        o.earlyEvents = k.earlyEvents
        o.earlyFinishes = k.earlyFinishes
        o.earliestMs = k.earliestMs
        o.doubledFinishes = k.doubledFinishes
        o.eventsAfterFinish = k.eventsAfterFinish
        o.startErrors = k.startErrors
        return o
    }
}
