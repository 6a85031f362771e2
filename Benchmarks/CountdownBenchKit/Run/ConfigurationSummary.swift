/// Turns a configuration's repeats into its entry in the document: percentiles from every
/// repeat's histograms merged (pooled), the spread between repeats, the noise flag, the floor
/// of the same windows, and the machine's load.
enum ConfigurationSummary {
    /// Repeats whose tick p99s differ by more than this factor make a configuration noisy.
    static let noisyRatio = 2.0
    /// A window whose floor p99 exceeds the floor alone by more than this factor was disturbed.
    static let disturbedRatio = 4.0

    /// A figure read from samples: its value, how many samples, and whether any was cut off.
    struct Reading {
        let value: Double
        let samples: Int
        let isLowerBound: Bool
    }

    /// `baselineFloorP99`: the floor alone, ms, what each window's floor is held against.
    static func configuration(
        _ step: Sweep.Step, rounds: Int, baselineFloorP99: Double?, repeats: [RepeatSamples]
    ) -> RunDocument.Configuration {
        var pooled = RepeatSamples.Histograms()
        for r in repeats { pooled.merge(r.histograms) }
        let tick = repeats.first?.tick ?? 1
        let perRepeat = repeats.map { r in
            let own = readings(r.histograms, tick: tick)
            return RunDocument.Repeat(
                figures: own.mapValues(\.value).merging(r.scalarFigures) { a, _ in a },
                lowerBounds: own.filter(\.value.isLowerBound).map(\.key).sorted { $0.rawValue < $1.rawValue },
                outcome: r.run.outcome, counts: r.counts, load: r.run.load,
                windowFloorP99: r.run.windowFloor.percentile(99)?.milliseconds)
        }
        var figures: [Figure: FigureValue] = [:]
        let spreads = Dictionary(uniqueKeysWithValues: Figure.allCases.compactMap { f in
            Spread(perRepeat.compactMap { $0.figures[f] }).map { (f, $0) }
        })
        let multiple = repeats.count > 1
        for (figure, reading) in readings(pooled, tick: tick) {
            figures[figure] = FigureValue(
                value: reading.value, samples: reading.samples, isLowerBound: reading.isLowerBound,
                isResolved: reading.samples >= figure.samplesNeeded, repeats: multiple ? spreads[figure] : nil)
        }
        for figure in Figure.allCases where figures[figure] == nil {
            guard let spread = spreads[figure] else { continue }
            let n = perRepeat.filter { $0.figures[figure] != nil }.count
            figures[figure] = FigureValue(
                value: spread.median, samples: n, isLowerBound: false, isResolved: true, repeats: multiple ? spread : nil)
        }
        let p99s = spreads[.tickP99]
        return RunDocument.Configuration(
            backend: step.backend.description, starts: step.pattern, count: step.count, rounds: rounds,
            figures: figures, outcome: .combined(repeats.map(\.run.outcome)),
            isNoisy: multiple && (p99s?.ratio ?? 1) > noisyRatio,
            isDisturbed: baselineFloorP99.map { baseline in
                perRepeat.contains { ($0.windowFloorP99 ?? 0) > disturbedRatio * baseline }
            } ?? false,
            windowFloor: LatencySummary(pooled.windowFloor),
            load: MachineLoad.combined(repeats.compactMap(\.run.load)), repeats: perRepeat,
            histograms: .init(
                tickLateness: pooled.tickLateness, finishError: pooled.finishError, startDelay: pooled.startDelay,
                windowFloor: pooled.windowFloor))
    }

    /// Every figure the histograms give.
    static func readings(_ h: RepeatSamples.Histograms, tick: UInt64) -> [Figure: Reading] {
        var out: [Figure: Reading] = [:]
        func put(_ figure: Figure, _ histogram: LatencyHistogram, scale: Double = 1e-6) {
            guard let p = figure.percentile, let value = histogram.percentile(p) else { return }
            out[figure] = Reading(
                value: Double(value.nanoseconds) * scale, samples: histogram.count, isLowerBound: value.isLowerBound)
        }
        for figure in [Figure.tickP50, .tickP90, .tickP99, .tickP999, .tickMax] { put(figure, h.tickLateness) }
        put(.finishP50, h.finishError)
        put(.finishP99, h.finishError)
        put(.startDelayP50, h.startDelay)
        put(.startDelayP99, h.startDelay)
        put(.poolWait, h.poolWait)
        put(.startCall, h.startCall, scale: 1e-3)
        put(.startCallP99, h.startCall, scale: 1e-3)
        put(.cancelCall, h.cancelCall, scale: 1e-3)
        put(.cancelCallP99, h.cancelCall, scale: 1e-3)
        put(.startFloor, h.startFloor, scale: 1e-3)
        put(.cancelFloor, h.cancelFloor, scale: 1e-3)
        for (ratio, call, floor) in [(Figure.startFloorRatio, Figure.startCall, Figure.startFloor), (.cancelFloorRatio, .cancelCall, .cancelFloor)] {
            guard let call = out[call], let floor = out[floor], floor.value > 0 else { continue }
            out[ratio] = Reading(
                value: call.value / floor.value, samples: min(call.samples, floor.samples), isLowerBound: call.isLowerBound)
        }
        if !h.startDelay.isEmpty {
            out[.lateStarts] = Reading(
                value: 100 * h.startDelay.fraction(above: tick), samples: h.startDelay.count,
                isLowerBound: h.startDelay.censoredCount > 0)
        }
        if let p99 = out[.tickP99], let floor = h.windowFloor.percentile(99), floor.nanoseconds > 0 {
            out[.floorRatio] = Reading(
                value: p99.value / floor.milliseconds, samples: min(p99.samples, h.windowFloor.count),
                isLowerBound: p99.isLowerBound)
        }
        return out
    }
}
