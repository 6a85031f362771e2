import Countdown

/// One repeat of one configuration: the run (its rounds), then the start/cancel probe (spread
/// configurations only: the calls do not depend on how starts were placed).
struct RepeatMeasurement {
    let step: Sweep.Step
    let settings: RunSettings
    let keys: ArraySlice<String>

    func measure() throws(CountdownError) -> RepeatSamples {
        let run = try ConfigurationRunner(step: step, settings: settings, keys: keys).run()
        let churn = step.pattern == .spread
            ? try ChurnProbe(backend: step.backend, count: step.count, settings: settings, keys: keys).run() : nil
        return RepeatSamples(run: run, churn: churn, tick: UInt64(settings.tick.nanoseconds))
    }
}

/// What one repeat measured, before it is summarised: its histograms, which the configuration
/// pools with the other repeats', and its one-off figures.
struct RepeatSamples {
    let run: ConfigurationRunner.Tally
    let churn: ChurnProbe.Outcome?
    let tick: UInt64

    /// Figures read from histograms: this repeat's, or (``pooled(_:)``) every repeat's merged.
    struct Histograms {
        var tickLateness = LatencyHistogram()
        var finishError = LatencyHistogram()
        var startDelay = LatencyHistogram()
        var windowFloor = LatencyHistogram()
        var poolWait = LatencyHistogram()
        var startCall = LatencyHistogram()
        var cancelCall = LatencyHistogram()
        var startFloor = LatencyHistogram()
        var cancelFloor = LatencyHistogram()

        mutating func merge(_ other: Histograms) {
            tickLateness.merge(other.tickLateness)
            finishError.merge(other.finishError)
            startDelay.merge(other.startDelay)
            windowFloor.merge(other.windowFloor)
            poolWait.merge(other.poolWait)
            startCall.merge(other.startCall)
            cancelCall.merge(other.cancelCall)
            startFloor.merge(other.startFloor)
            cancelFloor.merge(other.cancelFloor)
        }
    }

    var histograms: Histograms {
        Histograms(
            tickLateness: run.tickLateness, finishError: run.finishError, startDelay: run.startDelay,
            windowFloor: run.windowFloor, poolWait: run.poolWait,
            startCall: churn?.start ?? .init(), cancelCall: churn?.cancel ?? .init(),
            startFloor: churn?.startFloor ?? .init(), cancelFloor: churn?.cancelFloor ?? .init())
    }

    /// Figures that are one measurement per repeat (CPU, threads, memory): the configuration
    /// reports their median.
    var scalarFigures: [Figure: Double] {
        var figures: [Figure: Double] = [:]
        let window = Double(run.window)
        if window > 0 {
            figures[.cpu] = 100 * Double(run.cpu) / window
            figures[.contextSwitches] = Double(run.contextSwitches) / (window / 1e9)
        }
        if run.startPhase > 0 { figures[.cpuStartPhase] = 100 * Double(run.startPhaseCPU) / Double(run.startPhase) }
        if run.steadyWindow > 0 { figures[.cpuSteady] = 100 * Double(run.steadyCPU) / Double(run.steadyWindow) }
        if run.steadyEvents > 0 { figures[.cpuPerEvent] = Double(run.steadyCPU) / 1e3 / Double(run.steadyEvents) }
        if run.steadyWindow > 0 { figures[.wakeUps] = Double(run.steadyWakeUps) / (Double(run.steadyWindow) / 1e9) }
        if run.steadyWakeUps > 0 { figures[.cpuPerWakeUp] = Double(run.steadyCPU) / 1e3 / Double(run.steadyWakeUps) }
        if run.floorWakeUps > 0 { figures[.floorCPUPerWakeUp] = Double(run.floorCPU) / 1e3 / Double(run.floorWakeUps) }
        if let own = figures[.cpuPerWakeUp], let floor = figures[.floorCPUPerWakeUp], floor > 0 {
            figures[.wakeUpFloorRatio] = own / floor
        }
        if let ran = run.threadsThatRan { figures[.threads] = Double(ran) }
        // Below a thousand countdowns a 4 KiB page is more than the countdowns themselves.
        if let churn, let rss = churn.residentBytesPerCountdown, churn.filled >= 1000 { figures[.rss] = rss }
        return figures
    }

    var counts: RunDocument.Counts {
        RunDocument.Counts(
            countdowns: run.countdowns, started: run.started, finished: run.finished,
            notStarted: run.countdowns - run.attempted, neverTicked: run.neverTicked, ticks: run.ticks,
            repeatedGridPoints: run.repeatedGridPoints, startPhaseMs: Double(run.startPhase) / 1e6,
            windowMs: Double(run.window) / 1e6, rounds: run.rounds, hitTimeLimit: run.hitTimeLimit,
            baselineThreads: run.baselineThreads, peakThreads: run.peakThreads,
            churnFilled: churn?.filled ?? 0, churnFillMs: Double(churn?.fillTime ?? 0) / 1e6)
    }
}
