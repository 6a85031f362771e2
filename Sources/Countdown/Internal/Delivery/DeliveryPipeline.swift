/// Everything the delivery side keeps between calls, as a value: the events decided and not
/// yet taken, in the order they were decided, the first fires to file, how many events were
/// ever decided, whether a drain is on its way or held for the store, and when the last drain
/// ended. It lives beside the table under the engine's lock (``EngineState``): the table
/// decides and appends here, in the order of all decisions; the drain (``DrainRun``, run by the
/// engine) takes a batch at a time in one short hold of the same lock. A wake-up that decides a
/// thousand events, or a burst of a million starts, costs one hop to the delivery queue per
/// batch, not per event. Buffers are swapped and reused, so after warm-up an event allocates
/// nothing here. Nothing here locks, reads a clock or calls an observer.
///
/// Generic over what it delivers, so that the fleet's watch (`LocalWatch`, which delivers what
/// its `ObserverRegistry` decides) runs the same pipeline and the same ``DrainRun``: its ticks and
/// finishes are appended in the order decided and taken a batch at a time, as the engine's are.
package struct DeliveryPipeline<Item> {
    /// Where the drain stands: kinds, in the order a pipeline moves through them.
    package enum Phase: Equatable, Sendable {
        /// No drain is queued: the next thing appended queues one.
        case idle
        /// A drain is queued or running, and takes what is appended.
        case draining
        /// A drain put the front of what is pending back to wait for the store; the writer
        /// queues the drain again once the write is done.
        case heldForStore(DeliveryHold)
    }

    private var pending: ContiguousArray<Item> = []
    /// Filed by the drain before it delivers: their order does not matter, only that none waits
    /// behind a later drain.
    private var pendingFirstFires: ContiguousArray<DueItem> = []
    private var spare: ContiguousArray<Item> = []
    /// The buffers of the last drain's batch, emptied, for the next drain: a drain ends at each
    /// turn and each gap in the stream, and one that began with empty buffers grew them again,
    /// by doubling, under this lock (copying what the starts had appended meanwhile).
    private var spareBatch = DeliveryBatch<Item>()

    package private(set) var phase = Phase.idle

    /// Whether a drain is queued or running (for tests: a drain that handed the queue back at
    /// its turn leaves one queued behind whatever was queued meanwhile).
    package var isDrainQueued: Bool { phase != .idle }

    /// How many events were ever decided: the next one's ticket, its place in the order of all
    /// events. A drain that took them all has delivered every ticket below it.
    private(set) var decided: UInt64 = 0

    /// When the last drain ended, on the delivery side's monotonic clock: a drain queued soon
    /// after is in a dense stream (``DrainRun/linger``).
    private(set) var lastDrainEnd: UInt64 = 0

    /// The most a buffer kept for reuse holds. A backlog (a million starts made faster than
    /// their first ticks are delivered) grows the buffers to its size, a delivery each, and
    /// kept, they stayed resident for the scheduler's life.
    static var keptCapacity: Int { 16_384 }

    package init() {}

    // MARK: - The table's side

    /// Appends `delivery`, decided now, after every event decided before it: `.added`, or
    /// `.owingDrain` when no drain was queued (the caller queues one, after the lock).
    @inline(__always)
    mutating func append(_ delivery: consuming Item) -> Handover {
        pending.append(delivery)
        decided &+= 1
        return claimDrain()
    }

    /// Appends `items`, decided now, in order (the fleet's watch: what one decision of its
    /// registry asks for).
    package mutating func append(contentsOf items: some Collection<Item>) -> Handover {
        guard !items.isEmpty else { return .nothing }
        pending.append(contentsOf: items)
        decided &+= UInt64(items.count)
        return claimDrain()
    }

    /// Appends a first fire to file.
    mutating func append(_ firstFire: DueItem) -> Handover {
        pendingFirstFires.append(firstFire)
        return claimDrain()
    }

    @inline(__always)
    private mutating func claimDrain() -> Handover {
        guard phase == .idle else { return .added }
        phase = .draining
        return .owingDrain
    }

    /// The events pending, in order, for tests that read what a table decided: taken, as a
    /// drain takes them, but delivered by nobody.
    mutating func takePending() -> ContiguousArray<Item> {
        defer { pending = [] }
        return pending
    }

    // MARK: - The drain's side

    /// A drain begins at `now`: it takes what is pending into `batch` (handed the buffers the
    /// last drain left) and the hold on its front, if there is one. Returns its run, dense when
    /// `continuing` (queued by a lingering drain that handed the queue back) or queued within
    /// ``DrainRun/linger`` of the last drain's end; `lingering`: the mechanism lets a drain
    /// linger (``ArmingStyle/deliveryMayLinger``).
    package mutating func beginDrain(
        at now: UInt64, lingering: Bool, continuing: Bool, into batch: inout DeliveryBatch<Item>
    ) -> DrainRun {
        swap(&batch, &spareBatch)
        let dense = continuing || now &- lastDrainEnd < DrainRun.linger
        var hold: DeliveryHold?
        if case .heldForStore(let held) = phase {
            hold = held
            phase = .draining
        }
        // Stays queued only if it will linger: a drain that found nothing and ends at once
        // must leave the next event's decision to queue another.
        take(into: &batch, staying: lingering && dense)
        return DrainRun(began: now, lingering: lingering, dense: dense, hold: hold)
    }

    /// Everything pending, for the drain that is running, swapped into `batch`, whose buffers
    /// (emptied by the drain, so that no observer goes under this lock) are kept for reuse.
    /// While events keep coming the drain stays queued, so appends in the meantime queue no
    /// second hop. With nothing pending, `staying` keeps the drain queued (it lingers, or handed
    /// the queue to the drain it queued); otherwise the drain ends, and the next append queues a
    /// new one.
    package mutating func take(into batch: inout DeliveryBatch<Item>, staying: Bool) {
        precondition(
            batch.deliveries.isEmpty && batch.firstFires.isEmpty, "a batch taken before it was emptied")
        if batch.deliveries.capacity > Self.keptCapacity {
            batch.oversized = batch.deliveries
        } else if batch.deliveries.capacity > spare.capacity {
            spare = batch.deliveries
        }
        if pending.isEmpty && pendingFirstFires.isEmpty && !staying { phase = .idle }
        batch.deliveries = pending
        pending = spare
        spare = []
        if !pendingFirstFires.isEmpty {
            if batch.firstFires.capacity > Self.keptCapacity { swap(&batch.firstFires, &batch.oversizedFirstFires) }
            swap(&batch.firstFires, &pendingFirstFires)
        }
        batch.through = decided
    }

    /// Takes what came meanwhile, then ends the drain (its end noted at `now`, its batch kept)
    /// when nothing came and no drain is queued: the end of a drain that does not linger (every
    /// wake-up of the ticker's), noted in the same hold. Returns whether it ended. A buffer a
    /// backlog grew is let go of first, after the lock, by the drain's loop.
    package mutating func takeOrEnd(into batch: inout DeliveryBatch<Item>, handedBack: Bool, at now: UInt64) -> Bool {
        take(into: &batch, staying: handedBack)
        guard phase == .idle, !batch.holdsOversized else { return false }
        end(keeping: &batch, notingGapAt: now)
        return true
    }

    /// A drain ended: its batch is kept for the next one, and, when it ended for want of
    /// events (not handing the queue back), its end is noted at `now`.
    package mutating func end(keeping batch: inout DeliveryBatch<Item>, notingGapAt now: UInt64?) {
        if let now { lastDrainEnd = now }
        keep(&batch)
    }

    /// Keeps a drain's emptied batch for the next one, when it has more room than the one kept
    /// and no buffer past ``keptCapacity``; the drain lets go of whichever it holds after the
    /// lock (no buffer is freed under it). A batch still holding something is not kept: what
    /// it holds stays the drain's.
    mutating func keep(_ batch: inout DeliveryBatch<Item>) {
        guard batch.deliveries.isEmpty && batch.firstFires.isEmpty,
            batch.deliveries.capacity <= Self.keptCapacity && batch.firstFires.capacity <= Self.keptCapacity
        else { return }
        if batch.deliveries.capacity + batch.firstFires.capacity
            > spareBatch.deliveries.capacity + spareBatch.firstFires.capacity
        {
            swap(&batch, &spareBatch)
        }
    }

    /// Puts `deliveries` back before everything pending, held until the store has written the
    /// change count `hold.through`. The drain stays queued, so no append queues another: the
    /// writer queues it again.
    mutating func hold(_ deliveries: ArraySlice<Item>, _ hold: DeliveryHold) {
        var front = ContiguousArray(deliveries)
        front.append(contentsOf: pending)
        pending = front
        phase = .heldForStore(hold)
    }
}

extension DeliveryPipeline: Sendable where Item: Sendable {}
