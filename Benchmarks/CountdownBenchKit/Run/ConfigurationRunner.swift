import CountdownSupport
import Countdown
import Dispatch

/// One repeat of one configuration (backend × N × start pattern): rounds of N countdowns of
/// the same duration, started on one thread, one round after another on one scheduler, every
/// event recorded, the process and the machine sampled, a floor thread running through the
/// window, and a time limit per round after which whatever had not happened is counted as late.
struct ConfigurationRunner {
    let step: Sweep.Step
    let settings: RunSettings
    let keys: ArraySlice<String>

    /// What the rounds recorded, merged.
    struct Tally {
        var tickLateness = LatencyHistogram()
        var finishError = LatencyHistogram()
        var startDelay = LatencyHistogram()
        var windowFloor = LatencyHistogram()
        var poolWait = LatencyHistogram()
        var outcome = Outcome()
        var rounds = 0
        var countdowns = 0
        var attempted = 0
        var started = 0
        var finished = 0
        var neverTicked = 0
        var ticks = 0
        var repeatedGridPoints = 0
        /// ns, over every round.
        var startPhase: UInt64 = 0
        var window: UInt64 = 0
        var hitTimeLimit = false
        /// CPU over the whole window, while `start` was being called (the starter's pacing
        /// included), and from each round's last start to its end with the events delivered in
        /// it: the cost of counting down alone. The floor and sampler threads' CPU is left out.
        var cpu: UInt64 = 0
        var startPhaseCPU: UInt64 = 0
        var steadyCPU: UInt64 = 0
        var steadyWindow: UInt64 = 0
        var steadyEvents = 0
        /// The scheduler's wake-ups from each round's last start to its end: the process's
        /// voluntary context switches, less the benchmark's own threads' (its floor, sampler,
        /// the sampler's pool probes, and the starter waiting for the round).
        var steadyWakeUps = 0
        /// The floor thread's wake-ups and CPU over the same windows: the machine's own cost of
        /// a wake-up, in the same minutes.
        var floorWakeUps = 0
        var floorCPU: UInt64 = 0
        var contextSwitches = 0
        var baselineThreads = 0
        var peakThreads = 0
        /// Threads that used at least 0.1 ms of CPU during the window (nil without /proc).
        var threadsThatRan: Int?
        var load: MachineLoad?
    }

    func run() throws(CountdownError) -> Tally {
        ProcessStatus.releaseFreeMemory()
        var tally = Tally()
        tally.baselineThreads = ProcessStatus.now()?.threads ?? 0
        let delivery = DispatchQueue(label: "bench.delivery")
        let scheduler = try step.backend.makeScheduler(.init(
            tickInterval: settings.tick, deliveryQueue: delivery, capacity: step.count,
            maximumDuration: max(settings.duration, .seconds(120))))

        let sampler = ResourceSampler()
        let floor = FloorProbe.start(period: UInt64(settings.floorPeriod.nanoseconds))
        let machineBefore = SystemCPUTimes.now()
        let threadsBefore = ThreadTimes.now()
        let before = ProcessUsage.now()
        let ownThreadsBefore = Self.ownThreadsCPU(floor, sampler)
        let first = SystemClocks.monotonic()
        for _ in 0..<settings.rounds(for: step.count) {
            round(on: scheduler, delivery: delivery, floor: floor, sampler: sampler, into: &tally)
            if tally.hitTimeLimit { break }
        }
        let end = SystemClocks.monotonic()
        let after = ProcessUsage.now()
        let ownThreadsCPU = Self.ownThreadsCPU(floor, sampler) - ownThreadsBefore
        let machineAfter = SystemCPUTimes.now()
        let threadsAfter = ThreadTimes.now()
        tally.windowFloor = floor.stop()
        let peaks = sampler.finish()
        scheduler.shutdown()
        delivery.sync {}

        tally.window = end - first
        tally.cpu = Self.saturating(after.cpuNanoseconds - before.cpuNanoseconds, minus: ownThreadsCPU)
        tally.contextSwitches = after.contextSwitches - before.contextSwitches
        tally.peakThreads = peaks.threads
        tally.poolWait = peaks.poolWait
        tally.threadsThatRan = threadsAfter.isEmpty ? nil : threadsAfter.busy(since: threadsBefore)
        if let machineBefore, let machineAfter {
            tally.load = machineAfter.load(
                since: machineBefore, ownCPU: after.cpuNanoseconds - before.cpuNanoseconds, window: tally.window)
        }
        return tally
    }

    /// One round: N starts, placed by the pattern, then waiting until every countdown finished
    /// or the round's time limit.
    private func round(
        on scheduler: any CountdownScheduler, delivery: DispatchQueue, floor: FloorProbe, sampler: ResourceSampler,
        into tally: inout Tally
    ) {
        let count = step.count
        let recorder = EventRecorder(count: count, tick: settings.tick, duration: settings.duration)
        let limit = UInt64(settings.timeLimit(for: step.pattern).nanoseconds)
        let spread = step.pattern == .spread ? UInt64(settings.tick.nanoseconds) : 0
        func cpu() -> UInt64 { Self.saturating(ProcessUsage.now().cpuNanoseconds, minus: Self.ownThreadsCPU(floor, sampler)) }

        let before = cpu()
        let first = SystemClocks.monotonic()
        // Starting stops when a countdown started now could not end within the limit.
        let lastUsefulStart = first + limit - UInt64(settings.duration.nanoseconds)
        var attempted = 0
        // Asked once, not per start: the loop below is the recording path of every backend.
        let batching = scheduler as? any BatchStarting
        if let batching {
            // A backend whose start is a round trip (Redis) starts in pipelined batches: the
            // keys whose instant has come, 64 at most, each recorded at the batch's instant.
            var index = 0
            while index < count {
                let target = first + spread * UInt64(index) / UInt64(count)
                var now = SystemClocks.monotonic()
                if now > lastUsefulStart { break }
                if target > now + 50_000 {
                    SystemClocks.sleep(untilMonotonic: target)
                    now = SystemClocks.monotonic()
                }
                var end = index + 1
                while end < count, end - index < 64, first + spread * UInt64(end) / UInt64(count) <= now { end += 1 }
                for i in index..<end { _ = recorder.begin(i, at: now) }
                let answers = batching.start(Array(index..<end).map { i in
                    (key: keys[i], duration: settings.duration, observer: { [recorder] (event: CountdownEvent) in recorder.record(i, event) })
                })
                for (i, answer) in zip(index..<end, answers) {
                    if case .failure(let error) = answer {
                        recorder.abandon(i)
                        tally.outcome.startErrors[error.description, default: 0] += 1
                    }
                }
                attempted += end - index
                index = end
            }
        }
        for (index, key) in zip(0..., keys) where batching == nil {
            let target = first + spread * UInt64(index) / UInt64(count)
            var now = SystemClocks.monotonic()
            if now > lastUsefulStart { break }
            if target > now + 50_000 {
                SystemClocks.sleep(untilMonotonic: target)
                now = SystemClocks.monotonic()
            }
            attempted += 1
            // The instant just read is the start's: its schedule begins no later than the call.
            _ = recorder.begin(index, at: now)
            do {
                try scheduler.start(key: key, duration: settings.duration) { [recorder] event in
                    recorder.record(index, event)
                }
            } catch {
                recorder.abandon(index)
                tally.outcome.startErrors[error.description, default: 0] += 1
            }
        }
        let startPhase = SystemClocks.monotonic() - first
        let afterStarts = cpu()
        let eventsBeforeSteady = recorder.deliveredCount.load(ordering: .relaxed)
        let steadyStart = SystemClocks.monotonic()
        let started = recorder.startedCount
        let wakeUpsBefore = WakeUps(floor: floor, sampler: sampler)

        _ = recorder.waitForFinishes(of: started, until: first + limit)
        let wakeUpsAfter = WakeUps(floor: floor, sampler: sampler)
        let end = SystemClocks.monotonic()
        let after = cpu()
        let steadyEvents = recorder.deliveredCount.load(ordering: .relaxed) - eventsBeforeSteady

        recorder.close()
        // Whatever `record` was under way has ended; the recorder is ours to read.
        delivery.sync {}
        let finished = recorder.finishedCount.load(ordering: .relaxed)
        let hitTimeLimit = finished < started || attempted < count
        if hitTimeLimit { recorder.censor(at: end) }

        tally.rounds += 1
        tally.countdowns += count
        tally.attempted += attempted
        tally.started += started
        tally.finished += finished
        tally.neverTicked += recorder.neverTicked
        tally.ticks += recorder.ticks
        tally.repeatedGridPoints += recorder.repeatedGridPoints
        tally.startPhase += startPhase
        tally.startPhaseCPU += Self.saturating(afterStarts, minus: before)
        tally.steadyCPU += Self.saturating(after, minus: afterStarts)
        tally.steadyWindow += end - steadyStart
        tally.steadyEvents += steadyEvents
        tally.steadyWakeUps += wakeUpsAfter.scheduler(since: wakeUpsBefore)
        tally.floorWakeUps += wakeUpsAfter.floor - wakeUpsBefore.floor
        tally.floorCPU += Self.saturating(wakeUpsAfter.floorCPU, minus: wakeUpsBefore.floorCPU)
        tally.tickLateness.merge(recorder.tickLateness)
        tally.finishError.merge(recorder.finishError)
        tally.startDelay.merge(recorder.startDelay)
        tally.outcome.skippedTicks += recorder.skippedTicks
        tally.outcome.earlyEvents += recorder.earlyEvents
        tally.outcome.earlyFinishes += recorder.earlyFinishes
        tally.outcome.earliestMs = min(tally.outcome.earliestMs, Double(recorder.earliest) / 1e6)
        tally.outcome.doubledFinishes += recorder.doubledFinishes
        tally.outcome.eventsAfterFinish += recorder.eventsAfterFinish
        if hitTimeLimit {
            tally.hitTimeLimit = true
            let delay = recorder.startDelay.percentile(50)
            tally.outcome.cutOff = .init(
                limitMs: Double(limit) / 1e6, finished: finished, countdowns: count, notStarted: count - attempted,
                startPhaseMs: Double(startPhase) / 1e6,
                lateStartsPercent: recorder.startDelay.isEmpty
                    ? nil : 100 * recorder.startDelay.fraction(above: UInt64(settings.tick.nanoseconds)),
                startDelayP50Ms: delay?.milliseconds, startDelayIsLowerBound: delay?.isLowerBound ?? false)
        }
    }

    /// The process's wake-ups at one instant, and the benchmark's own among them.
    struct WakeUps {
        let process: Int
        let floor: Int
        let floorCPU: UInt64
        let sampler: Int
        /// The starter's (this thread's): it waits for the round's finishes.
        let starter: Int

        init(floor probe: FloorProbe, sampler: ResourceSampler) {
            starter = ProcessUsage.threadVoluntarySwitches()
            (floor, floorCPU) = probe.wakeUps
            self.sampler = sampler.ownWakeUps
            process = ProcessUsage.now().voluntarySwitches
        }

        /// The scheduler's wake-ups since `earlier`: everything else's taken off.
        func scheduler(since earlier: WakeUps) -> Int {
            max(0, (process - earlier.process) - (floor - earlier.floor) - (sampler - earlier.sampler)
                - (starter - earlier.starter))
        }
    }

    /// The CPU the benchmark's own floor and sampler threads have used so far, each as of its
    /// last wake-up: left out of every CPU figure, as their wake-ups are left out of the
    /// scheduler's.
    static func ownThreadsCPU(_ floor: FloorProbe, _ sampler: ResourceSampler) -> UInt64 {
        floor.cpuNanoseconds + sampler.ownCPU
    }

    /// `a − b`, or 0 when b is larger: the process's CPU (getrusage) and the floor thread's
    /// (its own clock, as of its last wake-up) are read at slightly different instants, so
    /// over a window of a few microseconds (one start) their difference can step back.
    static func saturating(_ a: UInt64, minus b: UInt64) -> UInt64 { a > b ? a - b : 0 }
}
