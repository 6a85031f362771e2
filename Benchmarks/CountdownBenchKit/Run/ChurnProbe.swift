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
        var startFloor = LatencyHistogram()
        var cancelFloor = LatencyHistogram()
        /// Resident memory added per active countdown; nil without /proc.
        let residentBytesPerCountdown: Double?
    }

    func run() throws(CountdownError) -> Outcome {
        var outcome = try measureScheduler()
        // After the scheduler is gone, so that both have the memory to themselves.
        (outcome.startFloor, outcome.cancelFloor) = KeyedFloorProbe(
            keys: keys, filled: outcome.filled, samples: settings.churnSamples).run()
        return outcome
    }

    /// The timed pairs the scheduler and the keyed floor both run: `samples` keys spread over
    /// the `filled` first (each reused when there are fewer keys than samples), each removed
    /// and put back, each call timed. `remove` returns what it took out, nil when the key was not
    /// there (which it must be); what it took is let go after the pair, outside the timing.
    static func timePairs<Removed, Failure: Error>(
        of keys: ArraySlice<String>, filled: Int, samples: Int, what: String,
        remove: (String) -> Removed?, insert: (String) throws(Failure) -> Void
    ) throws(Failure) -> (insert: LatencyHistogram, remove: LatencyHistogram) {
        var inserts = LatencyHistogram(), removes = LatencyHistogram()
        for sample in 0..<(filled > 0 ? samples : 0) {
            let key = keys[keys.startIndex + (sample * max(filled / samples, 1)) % filled]
            let t0 = SystemClocks.monotonic()
            let removed = remove(key)
            let t1 = SystemClocks.monotonic()
            try insert(key)
            let t2 = SystemClocks.monotonic()
            precondition(removed != nil, "\(what) removed \(key), which it did not hold")
            removes.record(t1 - t0)
            inserts.record(t2 - t1)
        }
        return (inserts, removes)
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

        // One pair untimed first: the first cancel and start of a scheduler pay one-off costs.
        if filled > 0, let key = keys.first {
            scheduler.cancel(key: key)
            try scheduler.start(key: key, duration: duration, observer: observer)
        }
        let (start, cancel) = try Self.timePairs(
            of: keys, filled: filled, samples: settings.churnSamples, what: "the churn probe",
            remove: { scheduler.cancel(key: $0) ? () : nil },
            insert: { (key) throws(CountdownError) in try scheduler.start(key: key, duration: duration, observer: observer) })
        let perCountdown: Double? = if let baseline, let resident, filled > 0 {
            Double(resident - baseline) / Double(filled)
        } else { nil }
        return Outcome(
            filled: filled, fillTime: fillTime, start: start, cancel: cancel, residentBytesPerCountdown: perCountdown)
    }
}
