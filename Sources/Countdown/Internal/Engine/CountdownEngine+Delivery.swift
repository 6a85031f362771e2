import CountdownSupport
import Dispatch

/// Delivery: observers run on the delivery queue, in the order the table decided their events.
extension CountdownEngine {
    /// `continuing`: queued by a lingering drain that handed the queue back (``turn``): it
    /// lingers on, in the same dense stream.
    func queueDrain(continuing: Bool = false) {
        runtime.deliver { [self] in drain(lingering: mechanism.arming.deliveryMayLinger, continuing: continuing) }
    }

    /// Delivers every event decided so far, at once (after a ``turn``, what is left goes to a
    /// drain queued again); only on the delivery queue.
    func deliverDecided() {
        // Checked in debug builds only: on every wake-up, the check alone was a call into
        // libdispatch and a look at the thread's queue stack.
        #if DEBUG
        if case .system = runtime.world { dispatchPrecondition(condition: .onQueue(settings.deliveryQueue)) }
        #endif
        drain(lingering: false)
    }

    /// Whether a drain is queued: false once every drain has ended. For tests.
    var isDrainQueued: Bool { table.withLock { $0.outbox.isDrainQueued } }

    /// A drain queued within this long after the last one ended is in a dense stream of events
    /// (above 100 000 a second), and lingers: there, a wake-up of the delivery queue's thread
    /// per event costs more than one per gather.
    static var linger: UInt64 { 10_000 }

    /// How long a lingering drain's thread sleeps to let events gather before it looks for them
    /// again (Linux adds its timer slack, 50 µs by default): events in a dense stream are heard
    /// up to that much later. It sleeps, not spins: a spinning drain slowed the thread deciding
    /// the events by a tenth on average and up to twice in some runs (a million starts, two
    /// cores), and each look and each take pulls the outbox's cache lines from that thread's
    /// core. One sleep, one wake-up, covers every event decided meanwhile.
    static var gather: UInt64 { 20_000 }

    /// How long a drain holds the delivery queue, between two batches, before it hands it back:
    /// it queues itself again and ends, so that whatever was queued behind it runs first (the
    /// ticker's wake-up, which waits for the queue; an app's own work on its main queue).
    /// Without it, a drain in a stream that stayed dense held every wake-up until the stream
    /// ended: ticks came the whole stream late (770 ms behind a second of starts and cancels).
    /// A turn costs one `async`: a microsecond or so every half millisecond. (A batch is
    /// delivered whole: a slow observer still delays what comes after it.)
    static var turn: UInt64 { 500_000 }

    /// Delivers the first `count` of `deliveries`, in order, each read where it lies: a loop
    /// over the array, or over its buffer, copied each delivery whole to read its gate (its
    /// observer and its event's key retained, then released: callgrind, about 80 instructions
    /// an event).
    static func deliver(_ deliveries: borrowing ContiguousArray<Outbox.Delivery>, upTo count: Int) {
        deliveries.withUnsafeBufferPointer { buffer in
            guard let first = buffer.baseAddress else { return }
            for index in 0..<count { Outbox.Delivery.deliver(at: first + index) }
        }
    }

    /// Delivers everything decided so far, in order, and what is decided while it runs, until
    /// nothing is left. An observer revoked meanwhile (cancel, attach, detach, shutdown), or an
    /// event decided before its countdown's pause, stays silent (``DeliveryGate``).
    ///
    /// After a ``turn`` it hands the queue back, and a drain queued again goes on.
    ///
    /// `lingering`: when this drain was queued within ``linger`` of the last one's end (or by a
    /// lingering drain, `continuing`), it sleeps ``gather`` and looks again before it ends, so
    /// that a dense stream of events (a million starts in a second) costs a wake-up per gather,
    /// not per event. Only for a mechanism whose ``ArmingStyle/deliveryMayLinger``.
    ///
    /// A finish passes the ``StoreGate``: it waits, with what came after it, for the write
    /// that takes its countdown out of the file, and the queue is free meanwhile.
    func drain(lingering: Bool, continuing: Bool = false) {
        let began = runtime.monotonic()
        outboxFilled.word.store(0, ordering: .relaxed)
        var batch = Outbox.Batch()
        // Taken under the table's lock, which every decision holds: one short hold a batch.
        var (previousHold, dense) = table.withLock { table in
            table.outbox.reuseBatch(&batch)
            let dense = continuing || began &- table.outbox.lastDrainEnd < Self.linger
            // Stays queued only if it will linger: a drain that found nothing and ends at once
            // must leave the next event's decision to queue another.
            table.outbox.take(into: &batch, staying: lingering && dense)
            return (table.outbox.takeHold(), dense)
        }
        var published = deliveredBelow.word.load(ordering: .relaxed)
        var handedBack = false
        while true {
            // The buffers a take did not keep (grown by a backlog), let go of after its lock.
            if batch.oversized.capacity > 0 { batch.oversized = [] }
            if batch.oversizedArms.capacity > 0 { batch.oversizedArms = [] }
            // Filed before anything is delivered: no first fire waits for a later drain, and a
            // tick of this batch's countdowns finds its fire filed (the ticker's wake-ups run on
            // this queue).
            let filing = !batch.arms.isEmpty
            if filing {
                mechanism.file(batch.arms)
                batch.arms.removeAll(keepingCapacity: true)
            }
            let delivering = !batch.deliveries.isEmpty
            if delivering {
                if let (index, hold) = store.unwrittenFinish(
                    in: batch.deliveries, after: previousHold, changes: { table.withLock { $0.changes } },
                    redrain: { { [weak self] in self?.queueDrain() } })
                {
                    Self.deliver(batch.deliveries, upTo: index)
                    table.withLock { $0.outbox.hold(batch.deliveries[index...], count: hold.count, through: hold.through) }
                    return
                }
                previousHold = nil
                Self.deliver(batch.deliveries, upTo: batch.deliveries.count)
            }
            if batch.through != published {
                published = batch.through
                deliveredBelow.word.store(published, ordering: .releasing)
            }
            if delivering {
                // Emptied with no lock held: an observer may go with its last delivery.
                batch.deliveries.removeAll(keepingCapacity: true)
            }
            // The drain queued when this one handed the queue back goes on.
            if handedBack {
                table.withLock { $0.outbox.keepBatch(&batch) }
                return
            }
            // A batch of arms alone is something taken, as events are: the drain looks again.
            if !delivering && !filing {
                guard lingering && dense else {
                    let ended = runtime.monotonic()
                    table.withLock { table in
                        table.outbox.lastDrainEnd = ended
                        table.outbox.keepBatch(&batch)
                    }
                    return
                }
                // Lets events gather while the thread sleeps, then reads the flag, not the lock:
                // with nothing come meanwhile the stream is no longer dense, and the drain ends.
                runtime.sleep(untilMonotonic: runtime.monotonic() &+ Self.gather)
                if outboxFilled.word.load(ordering: .acquiring) == 0 { dense = false }
            }
            let staying = lingering && dense
            if previousHold == nil && runtime.monotonic() &- began >= Self.turn {
                // The next drain is queued before the last take, which stays (that drain will
                // take what comes next): a block queued before this point runs after every event
                // decided before it was delivered (one hop, as when no drain hands back), and
                // one queued after it runs after the next drain.
                queueDrain(continuing: staying)
                handedBack = true
            }
            outboxFilled.word.store(0, ordering: .relaxed)
            guard staying && !handedBack else {
                let ended = runtime.monotonic()
                let over = table.withLock { table in
                    table.outbox.take(into: &batch, staying: handedBack)
                    // Found nothing and ended (a drain that does not linger: every wake-up of
                    // the ticker's): its end noted in the same hold, not in a hold of its own.
                    // A buffer a backlog grew is let go of first, after the lock, by the loop.
                    guard !table.outbox.isDrainQueued, batch.oversized.capacity == 0,
                        batch.oversizedArms.capacity == 0
                    else { return false }
                    table.outbox.lastDrainEnd = ended
                    table.outbox.keepBatch(&batch)
                    return true
                }
                if over { return }
                continue
            }
            // In a dense stream the take is tried, not waited for: a burst of starts holds the
            // table's lock much of the time, and a drain that waited for it spun (perf, a
            // million starts at 1 s ticks: the lock's slow path 0.35 → 5.2 % of the samples).
            // Busy, it lets events gather once more, then waits.
            if table.withLockIfAvailable({ $0.outbox.take(into: &batch, staying: true) }) == nil {
                runtime.sleep(untilMonotonic: runtime.monotonic() &+ Self.gather)
                table.withLock { $0.outbox.take(into: &batch, staying: true) }
            }
        }
    }
}
