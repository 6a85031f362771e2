import CountdownSupport
import Countdown

/// One repeat of one configuration, turned into figures: the run, the start/cancel probe
/// (spread configurations only: the calls do not depend on how starts were placed), and the
/// outcome in words.
struct RepeatMeasurement {
    let backend: CountdownBackend
    let count: Int
    let pattern: StartPattern
    let settings: RunSettings
    let keys: ArraySlice<String>
    /// The floor's p99 in the same repeat, in ms.
    let floorP99: Double?

    func measure() throws(CountdownError) -> RunDocument.Repeat {
        let run = try ConfigurationRunner(
            backend: backend, count: count, pattern: pattern, settings: settings, keys: keys
        ).run()
        let churn = pattern == .spread
            ? try ChurnProbe(backend: backend, count: count, settings: settings, keys: keys).run() : nil
        let recorder = run.recorder

        var figures: [String: Double] = [:]
        var atLeast: [String] = []
        func put(_ figure: Figure, _ percentile: LatencyHistogram.Percentile?, scale: Double = 1e-6) {
            guard let percentile else { return }
            figures[figure.name] = Double(percentile.nanoseconds) * scale
            if percentile.isLowerBound { atLeast.append(figure.name) }
        }
        put(.tickP50, recorder.tickLateness.percentile(50))
        put(.tickP90, recorder.tickLateness.percentile(90))
        put(.tickP99, recorder.tickLateness.percentile(99))
        put(.tickP999, recorder.tickLateness.percentile(99.9))
        put(.tickMax, recorder.tickLateness.percentile(100))
        if let p99 = figures[Figure.tickP99.name], let floorP99, floorP99 > 0 {
            figures[Figure.floorRatio.name] = p99 / floorP99
            if atLeast.contains(Figure.tickP99.name) { atLeast.append(Figure.floorRatio.name) }
        }
        put(.finishP50, recorder.finishError.percentile(50))
        put(.finishP99, recorder.finishError.percentile(99))
        put(.startDelayP50, recorder.startDelay.percentile(50))
        put(.startDelayP99, recorder.startDelay.percentile(99))
        if !recorder.startDelay.isEmpty {
            figures[Figure.lateStarts.name] = 100 * recorder.startDelay.fraction(above: recorder.tick)
        }
        let window = Double(run.window)
        figures[Figure.cpu.name] = 100 * Double(run.usage.cpu) / window
        if run.startPhase > 0 {
            figures[Figure.cpuStartPhase.name] = 100 * Double(run.startPhaseCPU) / Double(run.startPhase)
        }
        if run.steady.window > 0 {
            figures[Figure.cpuSteady.name] = 100 * Double(run.steady.cpu) / Double(run.steady.window)
        }
        if run.steady.events > 0 {
            figures[Figure.cpuPerEvent.name] = Double(run.steady.cpu) / 1e3 / Double(run.steady.events)
        }
        figures[Figure.contextSwitches.name] = Double(run.usage.contextSwitches) / (window / 1e9)
        if let ran = run.threadsThatRan { figures[Figure.threads.name] = Double(ran) }
        put(.poolWait, run.peaks.poolWait.percentile(99))
        if let churn {
            put(.startCall, churn.start.percentile(50), scale: 1e-3)
            put(.startCallP99, churn.start.percentile(99), scale: 1e-3)
            put(.cancelCall, churn.cancel.percentile(50), scale: 1e-3)
            put(.cancelCallP99, churn.cancel.percentile(99), scale: 1e-3)
            // Below a thousand countdowns a 4 KiB page is more than the countdowns themselves.
            if let rss = churn.residentBytesPerCountdown, churn.filled >= 1000 { figures[Figure.rss.name] = rss }
        }

        let started = run.attempted - run.startErrors.values.reduce(0, +)
        let counts = RunDocument.Counts(
            countdowns: count, started: started,
            finished: recorder.finishedCount.load(ordering: .relaxed),
            notStarted: count - run.attempted, neverTicked: recorder.neverTicked, ticks: recorder.ticks,
            skippedTicks: recorder.skippedTicks, repeatedGridPoints: recorder.repeatedGridPoints, earlyEvents: recorder.earlyEvents, earlyFinishes: recorder.earlyFinishes,
            doubledFinishes: recorder.doubledFinishes, eventsAfterFinish: recorder.eventsAfterFinish,
            startErrors: run.startErrors, startPhaseMs: Double(run.startPhase) / 1e6,
            windowMs: window / 1e6, hitTimeLimit: run.hitTimeLimit, baselineThreads: run.baselineThreads,
            peakThreads: run.peaks.threads, earliestMs: Double(recorder.earliest) / 1e6,
            churnFilled: churn?.filled ?? 0, churnFillMs: Double(churn?.fillTime ?? 0) / 1e6)
        return RunDocument.Repeat(
            figures: figures, atLeast: atLeast.sorted(),
            outcome: Self.outcome(counts, figures: figures, atLeast: atLeast, settings: settings, pattern: pattern),
            counts: counts,
            histograms: .init(tickLateness: recorder.tickLateness, finishError: recorder.finishError, startDelay: recorder.startDelay))
    }

    /// What happened, in one line: "complete", or what the time limit cut off and why.
    static func outcome(
        _ c: RunDocument.Counts, figures: [String: Double], atLeast: [String], settings: RunSettings, pattern: StartPattern
    ) -> String {
        var parts: [String] = []
        if c.hitTimeLimit || c.notStarted > 0 {
            let limit = (settings.timeLimit(for: pattern)).text
            parts.append("time limit \(limit): \(c.finished) of \(c.countdowns) finished")
            if c.notStarted > 0 { parts.append("\(c.notStarted) never started (start calls took \(ReportFormat.milliseconds(c.startPhaseMs)))") }
            if let late = figures[Figure.lateStarts.name], late >= 0.5 {
                parts.append("\(ReportFormat.percent(late)) started more than one tick late")
            }
            if let delay = figures[Figure.startDelayP50.name] {
                let bound = atLeast.contains(Figure.startDelayP50.name) ? "≥ " : ""
                parts.append("median start delay \(bound)\(ReportFormat.milliseconds(delay))")
            }
        } else {
            parts.append("complete")
        }
        if c.skippedTicks > 0 { parts.append("\(c.skippedTicks) ticks skipped (caught up)") }
        if c.earlyEvents > 0 {
            parts.append("\(c.earlyEvents) events EARLY (\(c.earlyFinishes) of them finishes; by up to \(ReportFormat.milliseconds(-c.earliestMs)))")
        }
        if c.doubledFinishes > 0 { parts.append("\(c.doubledFinishes) finishes DOUBLED") }
        if c.eventsAfterFinish > 0 { parts.append("\(c.eventsAfterFinish) events AFTER a finish") }
        for (error, times) in c.startErrors.sorted(by: { $0.key < $1.key }) { parts.append("start threw \(times)×: \(error)") }
        return parts.joined(separator: "; ")
    }
}
