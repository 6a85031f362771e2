import CountdownSupport
import Dispatch

/// The drain: the small executor that runs what the ``DeliveryPipeline`` and each drain's
/// ``DrainRun`` decide, through the runtime. Observers run on the delivery queue, in the order
/// the table decided their events.
extension CountdownEngine {
    /// `continuing`: queued by a lingering drain that handed the queue back (``DrainRun/turn``):
    /// it lingers on, in the same dense stream.
    func queueDrain(continuing: Bool = false) {
        runtime.deliver { [self] in drain(lingering: mechanism.arming.deliveryMayLinger, continuing: continuing) }
    }

    /// Delivers every event decided so far, at once (after a turn, what is left goes to a drain
    /// queued again); only on the delivery queue.
    func deliverDecided() {
        // Checked in debug builds only: on every wake-up, the check alone was a call into
        // libdispatch and a look at the thread's queue stack.
        #if DEBUG
        if case .system = runtime.world { dispatchPrecondition(condition: .onQueue(settings.deliveryQueue)) }
        #endif
        drain(lingering: false)
    }

    /// Whether a drain is queued: false once every drain has ended. For tests.
    var isDrainQueued: Bool { state.withLock { $0.pipeline.isDrainQueued } }

    /// Delivers everything decided so far, in order, and what is decided while it runs, until
    /// the ``DrainRun`` ends it: after its turn it hands the queue back to a drain queued again;
    /// in a dense stream it lingers, asleep, so that a million starts in a second cost a wake-up
    /// per gather, not per event (`lingering`: only for a mechanism whose
    /// ``ArmingStyle/deliveryMayLinger``). An observer revoked meanwhile (cancel, attach, detach,
    /// shutdown), or an event decided before its countdown's pause, stays silent
    /// (``DeliveryGate``). A finish passes the ``StoreGate``: it waits, with what came after it,
    /// for the write that takes its countdown out of the file, and the queue is free meanwhile.
    ///
    /// Each take is one short hold of the engine's lock, which every decision holds.
    func drain(lingering: Bool, continuing: Bool = false) {
        let began = runtime.monotonic()
        signals.clearFilled()
        var batch = DeliveryBatch<Delivery>()
        var run = state.withLock {
            $0.pipeline.beginDrain(at: began, lingering: lingering, continuing: continuing, into: &batch)
        }
        var published = signals.published
        while true {
            batch.releaseOversized()
            // Filed before anything is delivered: no first fire waits for a later drain, and a
            // tick of this batch's countdowns finds its fire filed (the ticker's wake-ups run on
            // this queue).
            let filing = !batch.firstFires.isEmpty
            if filing {
                mechanism.file(batch.firstFires)
                batch.firstFires.removeAll(keepingCapacity: true)
            }
            let delivering = !batch.deliveries.isEmpty
            if delivering {
                if let (index, hold) = store.unwrittenFinish(
                    in: batch.deliveries, after: run.hold, changes: { state.withLock { $0.changes } },
                    redrain: { { [weak self] in self?.queueDrain() } })
                {
                    Delivery.deliver(batch.deliveries, upTo: index)
                    state.withLock { $0.pipeline.hold(batch.deliveries[index...], hold) }
                    return
                }
                run.passedStore()
                Delivery.deliver(batch.deliveries, upTo: batch.deliveries.count)
            }
            if batch.through != published {
                published = batch.through
                signals.publish(deliveredBelow: published)
            }
            // Emptied with no lock held: an observer may go with its last delivery.
            if delivering { batch.deliveries.removeAll(keepingCapacity: true) }
            var step = run.delivered(tookAnything: delivering || filing, now: runtime.monotonic())
            if case .gather(let until) = step {
                // Reads the signal, not the lock: with nothing come meanwhile the stream is no
                // longer dense.
                runtime.sleep(untilMonotonic: until)
                step = run.gathered(signals.wasFilled, now: runtime.monotonic())
            }
            switch step {
            case .end(let notingGap):
                let ended = notingGap ? runtime.monotonic() : nil
                state.withLock { $0.pipeline.end(keeping: &batch, notingGapAt: ended) }
                return
            case .gather:
                preconditionFailure("a drain gathers at most once between two batches")
            case .take(let handingBack):
                // The next drain is queued before the last take, which stays (that drain will
                // take what comes next): a block queued before this point runs after every event
                // decided before it was delivered (one hop, as when no drain hands back), and
                // one queued after it runs after the next drain.
                if let continuing = handingBack { queueDrain(continuing: continuing) }
                signals.clearFilled()
                let now = runtime.monotonic()
                if state.withLock({ $0.pipeline.takeOrEnd(into: &batch, handedBack: handingBack != nil, at: now) }) {
                    return
                }
            case .takeLingering:
                signals.clearFilled()
                // Tried, not waited for: a burst of starts holds the lock much of the time, and
                // a drain that waited for it spun (perf, a million starts at 1 s ticks: the lock's
                // slow path 0.35 → 5.2 % of the samples). Busy, it lets events gather once more,
                // then waits.
                if state.withLockIfAvailable({ $0.pipeline.take(into: &batch, staying: true) }) == nil {
                    runtime.sleep(untilMonotonic: runtime.monotonic() &+ DrainRun.gather)
                    state.withLock { $0.pipeline.take(into: &batch, staying: true) }
                }
            }
        }
    }
}
