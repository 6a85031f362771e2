import CountdownSupport
import Countdown
import Dispatch

/// One configuration (backend × N × start pattern), run once: N countdowns of the same
/// duration started on one thread, every event recorded, the process sampled, and a time
/// limit after which whatever had not happened is counted as late.
struct ConfigurationRunner {
    let backend: CountdownBackend
    let count: Int
    let pattern: StartPattern
    let settings: RunSettings
    let keys: ArraySlice<String>

    struct Outcome {
        let recorder: EventRecorder
        let startErrors: [String: Int]
        let attempted: Int
        let startPhase: UInt64
        let window: UInt64
        let hitTimeLimit: Bool
        let usage: (cpu: UInt64, contextSwitches: Int)
        /// CPU used while `start` was being called (the starter's pacing included).
        let startPhaseCPU: UInt64
        /// From the last start to the end: CPU, length, and events delivered, the cost of
        /// counting down alone.
        let steady: (cpu: UInt64, window: UInt64, events: Int)
        let baselineThreads: Int
        let peaks: ResourceSampler.Peaks
        /// Threads that used at least 0.1 ms of CPU during the window (nil without /proc).
        let threadsThatRan: Int?
    }

    func run() throws(CountdownError) -> Outcome {
        ProcessStatus.releaseFreeMemory()
        let baselineThreads = ProcessStatus.now()?.threads ?? 0
        let delivery = DispatchQueue(label: "bench.delivery")
        let scheduler = try backend.makeScheduler(.init(
            tickInterval: settings.tick, deliveryQueue: delivery, capacity: count,
            maximumDuration: max(settings.duration, .seconds(120))))
        let recorder = EventRecorder(count: count, tick: settings.tick, duration: settings.duration)
        let limit = UInt64(settings.timeLimit(for: pattern).nanoseconds)
        let spread = pattern == .spread ? UInt64(settings.tick.nanoseconds) : 0

        let sampler = ResourceSampler()
        let threadsBefore = ThreadTimes.now()
        let before = ProcessUsage.now()
        let first = SystemClocks.monotonic()
        // Starting stops when a countdown started now could not end within the limit.
        let lastUsefulStart = first + limit - UInt64(settings.duration.nanoseconds)
        var startErrors: [String: Int] = [:]
        var attempted = 0
        for (index, key) in zip(0..., keys) {
            let target = first + spread * UInt64(index) / UInt64(count)
            let now = SystemClocks.monotonic()
            if now > lastUsefulStart { break }
            if target > now + 50_000 { SystemClocks.sleep(untilMonotonic: target) }
            attempted += 1
            _ = recorder.begin(index)
            do {
                try scheduler.start(key: key, duration: settings.duration) { [recorder] event in
                    recorder.record(index, event)
                }
            } catch {
                recorder.abandon(index)
                startErrors[error.description, default: 0] += 1
            }
        }
        let startPhase = SystemClocks.monotonic() - first
        let afterStarts = ProcessUsage.now()
        let eventsBeforeSteady = recorder.deliveredCount.load(ordering: .relaxed)
        let steadyStart = SystemClocks.monotonic()
        let started = attempted - startErrors.values.reduce(0, +)

        let cutoff = first + limit
        var end = SystemClocks.monotonic()
        while recorder.finishedCount.load(ordering: .relaxed) < started && end < cutoff {
            SystemClocks.sleep(untilMonotonic: min(end + 2_000_000, cutoff))
            end = SystemClocks.monotonic()
        }
        let after = ProcessUsage.now()
        let steadyEvents = recorder.deliveredCount.load(ordering: .relaxed) - eventsBeforeSteady
        let threadsAfter = ThreadTimes.now()
        let peaks = sampler.finish()

        recorder.close()
        scheduler.shutdown()
        // Whatever `record` was under way has ended; the recorder is ours to read.
        delivery.sync {}
        let hitTimeLimit = recorder.finishedCount.load(ordering: .relaxed) < started
        if hitTimeLimit { recorder.censor(at: end) }
        return Outcome(
            recorder: recorder, startErrors: startErrors, attempted: attempted, startPhase: startPhase,
            window: end - first, hitTimeLimit: hitTimeLimit,
            usage: (after.cpuNanoseconds - before.cpuNanoseconds, after.contextSwitches - before.contextSwitches),
            startPhaseCPU: afterStarts.cpuNanoseconds - before.cpuNanoseconds,
            steady: (after.cpuNanoseconds - afterStarts.cpuNanoseconds, end - steadyStart, steadyEvents),
            baselineThreads: baselineThreads, peaks: peaks,
            threadsThatRan: threadsAfter.isEmpty ? nil : threadsAfter.busy(since: threadsBefore))
    }
}
