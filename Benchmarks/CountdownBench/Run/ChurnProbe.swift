import CountdownSupport
import Countdown
import Dispatch

/// What `start` and `cancel` cost with N countdowns active, and the memory each countdown
/// takes. A scheduler is filled to N with countdowns whose ticks are far off (so no timer work
/// competes with the calls), then sampled keys are cancelled and started again, each call timed.
/// Then, once the scheduler is shut down, the ``KeyedFloorProbe`` does the same with a
/// `Dictionary`: the floor the calls are read against.
struct ChurnProbe {
    let backend: CountdownBackend
    let count: Int
    let settings: RunSettings
    let keys: ArraySlice<String>

    struct Outcome {
        let filled: Int
        let fillTime: UInt64
        let start: LatencyHistogram
        let cancel: LatencyHistogram
        /// The same keys inserted into and removed from a `Dictionary`, in the same order.
        let startFloor: LatencyHistogram
        let cancelFloor: LatencyHistogram
        /// Resident memory added per active countdown; nil without /proc.
        let residentBytesPerCountdown: Double?
    }

    func run() throws(CountdownError) -> Outcome {
        let scheduler = try measureScheduler()
        // After the scheduler is gone, so that both have the memory to themselves.
        let floor = KeyedFloorProbe(keys: keys, filled: scheduler.filled, samples: settings.churnSamples).run()
        return Outcome(
            filled: scheduler.filled, fillTime: scheduler.fillTime, start: scheduler.start, cancel: scheduler.cancel,
            startFloor: floor.insert, cancelFloor: floor.remove,
            residentBytesPerCountdown: scheduler.residentBytesPerCountdown)
    }

    /// Keys spread over the whole table, each reused when there are fewer keys than samples.
    static func sampledKey(_ sample: Int, of keys: ArraySlice<String>, filled: Int, samples: Int) -> String {
        keys[keys.startIndex + (sample * max(filled / samples, 1)) % filled]
    }

    private func measureScheduler() throws(CountdownError) -> Outcome {
        let delivery = DispatchQueue(label: "bench.churn-delivery")
        let observer: CountdownObserver = { _ in }
        let duration = Duration.seconds(100)
        ProcessStatus.releaseFreeMemory()
        let baseline = ProcessStatus.now()?.residentBytes
        let scheduler = try backend.makeScheduler(.init(
            tickInterval: .seconds(50), deliveryQueue: delivery, capacity: count))
        defer {
            scheduler.shutdown()
            delivery.sync {}
        }
        let first = SystemClocks.monotonic()
        let fillLimit = first + UInt64(settings.churnFillLimit.nanoseconds)
        var filled = 0
        for key in keys {
            if filled % 256 == 0 && SystemClocks.monotonic() > fillLimit { break }
            try scheduler.start(key: key, duration: duration, observer: observer)
            filled += 1
        }
        let fillTime = SystemClocks.monotonic() - first
        delivery.sync {}
        let resident = ProcessStatus.now()?.residentBytes

        var start = LatencyHistogram(), cancel = LatencyHistogram()
        let samples = settings.churnSamples
        // One pair untimed first: the first cancel and start of a scheduler pay one-off costs.
        if filled > 0, let key = keys.first {
            scheduler.cancel(key: key)
            try scheduler.start(key: key, duration: duration, observer: observer)
        }
        for sample in 0..<(filled > 0 ? samples : 0) {
            let key = Self.sampledKey(sample, of: keys, filled: filled, samples: samples)
            let t0 = SystemClocks.monotonic()
            let wasActive = scheduler.cancel(key: key)
            let t1 = SystemClocks.monotonic()
            try scheduler.start(key: key, duration: duration, observer: observer)
            let t2 = SystemClocks.monotonic()
            precondition(wasActive, "the churn probe cancelled \(key), which was not active")
            cancel.record(t1 - t0)
            start.record(t2 - t1)
        }
        let perCountdown: Double? = if let baseline, let resident, filled > 0 {
            Double(resident - baseline) / Double(filled)
        } else { nil }
        return Outcome(
            filled: filled, fillTime: fillTime, start: start, cancel: cancel, startFloor: .init(), cancelFloor: .init(),
            residentBytesPerCountdown: perCountdown)
    }
}
