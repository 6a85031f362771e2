/// Events the table decided, waiting for the delivery queue, in the order they were decided.
///
/// It is a field of the table, filled under the table's lock as each event is decided (a
/// decision appends its events where they go, in the order of all decisions, with nothing to
/// hand over after the lock), and emptied a batch at a time by the drain, which takes all that
/// is pending in one short hold of the same lock: a wake-up that decides a thousand events, or
/// a burst of a million starts, costs one hop to the delivery queue per batch, not per event.
/// Buffers are swapped and reused, so after warm-up an event allocates nothing here.
struct Outbox {
    struct Delivery: Sendable {
        let observer: CountdownObserver
        let event: CountdownEvent
        /// Its place's gate, read when it is delivered.
        let gate: DeliveryGate
        /// The observer's registration at its place (see ``DeliveryGate``).
        let registration: UInt32
        /// The pause generation of its countdown when it was decided, or ``answer``.
        let generation: UInt32

        /// The generation of a tick that answers a call (a start's, an attach's): no pause
        /// silences it, only a revocation. Pause generations stay below it.
        static let answer = UInt32.max - 1

        /// Calls the observer unless its registration was revoked, or the event was decided
        /// before the countdown's latest pause. No lock is held during the call, so the
        /// observer may call back into the scheduler. Only on the delivery queue.
        func deliver() {
            withUnsafePointer(to: self) { Self.deliver(at: $0) }
        }

        /// The same, for the delivery at `delivery`, read in place, field by field (the drain's
        /// loop: a delivery read whole was copied, observer and key retained, to read its gate).
        @inline(__always)
        static func deliver(at delivery: UnsafePointer<Delivery>) {
            guard delivery.pointee.gate.admits(
                registration: delivery.pointee.registration, generation: delivery.pointee.generation)
            else { return }
            delivery.pointee.observer(delivery.pointee.event)
        }
    }

    /// A first fire to file, for a mechanism that files its arms on the delivery queue (see
    /// ``ArmingStyle/sharedDueQueue``).
    struct Arm: Sendable {
        let id: CountdownID
        let firstFire: MonotonicInstant
    }

    private var pending: ContiguousArray<Delivery> = []
    /// Filed by the drain before it delivers: their order does not matter, only that none waits
    /// behind a later drain.
    private var pendingArms: ContiguousArray<Arm> = []
    private var spare: ContiguousArray<Delivery> = []
    /// Whether a drain is queued that will take what is pending.
    private var drainQueued = false

    /// Whether a drain is queued (for tests: a drain that handed the queue back at its turn
    /// leaves one queued behind whatever was queued meanwhile).
    var isDrainQueued: Bool { drainQueued }

    /// How many events were ever decided: the next one's ticket, its place in the order of all
    /// events. A drain that took them all has delivered every ticket below it.
    private(set) var decided: UInt64 = 0

    /// Appends `delivery`, decided now, after every event decided before it. Returns true when
    /// the caller must queue a drain (none is queued yet).
    @inline(__always)
    mutating func append(_ delivery: consuming Delivery) -> Bool {
        pending.append(delivery)
        decided &+= 1
        return claimDrain()
    }

    /// Appends a first fire to file (a mechanism that files its arms on the delivery queue).
    /// Returns true when the caller must queue a drain.
    mutating func append(_ arm: Arm) -> Bool {
        pendingArms.append(arm)
        return claimDrain()
    }

    @inline(__always)
    private mutating func claimDrain() -> Bool {
        guard !drainQueued else { return false }
        drainQueued = true
        return true
    }

    /// The events pending, in order, for tests that read what a table decided: taken, as a
    /// drain takes them, but delivered by nobody.
    mutating func takePending() -> ContiguousArray<Delivery> {
        defer { pending = [] }
        return pending
    }

    /// What a drain takes: the events pending, in order, and the first fires to file.
    struct Batch {
        var deliveries: ContiguousArray<Delivery> = []
        /// Every ticket below it is in these deliveries or was taken before.
        var through: UInt64 = 0
        /// First fires to file before anything is delivered.
        var arms: ContiguousArray<Arm> = []
        /// Buffers grown past ``Outbox/keptCapacity``, not reused: the drain lets go of them
        /// after the lock.
        var oversized: ContiguousArray<Delivery> = []
        var oversizedArms: ContiguousArray<Arm> = []
    }

    /// The most a buffer kept for reuse holds. A backlog (a million starts made faster than
    /// their first ticks are delivered) grows the buffers to its size, a delivery each, and
    /// kept, they stayed resident for the scheduler's life.
    static var keptCapacity: Int { 16_384 }

    /// Everything pending, for the drain that is running, swapped into `batch`, whose buffers
    /// (emptied by the drain, so that no observer goes under this lock) are kept for reuse.
    /// While events keep coming the drain stays queued, so appends in the meantime queue no
    /// second hop. With nothing pending, `staying` keeps the drain queued (it lingers and
    /// will look again); otherwise the drain ends, and the next append queues a new one.
    mutating func take(into batch: inout Batch, staying: Bool = false) {
        precondition(
            batch.deliveries.isEmpty && batch.arms.isEmpty, "a batch taken before it was emptied")
        if batch.deliveries.capacity > Self.keptCapacity {
            batch.oversized = batch.deliveries
        } else if batch.deliveries.capacity > spare.capacity {
            spare = batch.deliveries
        }
        if pending.isEmpty && pendingArms.isEmpty && !staying { drainQueued = false }
        batch.deliveries = pending
        pending = spare
        spare = []
        if !pendingArms.isEmpty {
            if batch.arms.capacity > Self.keptCapacity { swap(&batch.arms, &batch.oversizedArms) }
            swap(&batch.arms, &pendingArms)
        }
        batch.through = decided
    }

    /// The buffers of the last drain's batch, emptied, for the next drain: a drain ends at each
    /// turn and each gap in the stream, and one that began with empty buffers grew them again,
    /// by doubling, under this lock (copying what the starts had appended meanwhile).
    private var spareBatch = Batch()

    /// Hands a drain the buffers the last one left; its own (empty, holding none) stay with it.
    mutating func reuseBatch(_ batch: inout Batch) {
        swap(&batch, &spareBatch)
    }

    /// Keeps a drain's emptied batch for the next one, when it has more room than the one kept
    /// and no buffer past ``keptCapacity``; the drain lets go of whichever it holds after the
    /// lock (no buffer is freed under it). A batch still holding something is not kept: what
    /// it holds stays the drain's.
    mutating func keepBatch(_ batch: inout Batch) {
        guard batch.deliveries.isEmpty && batch.arms.isEmpty,
            batch.deliveries.capacity <= Self.keptCapacity && batch.arms.capacity <= Self.keptCapacity
        else { return }
        if batch.deliveries.capacity + batch.arms.capacity > spareBatch.deliveries.capacity + spareBatch.arms.capacity {
            swap(&batch, &spareBatch)
        }
    }

    /// Deliveries a drain put back to wait for the store: the first `count` pending ones were
    /// decided before the table's change count was `through`, so a write that covers it frees
    /// them (a finish is heard only once the file no longer holds its countdown).
    struct Hold {
        let count: Int
        let through: UInt64
    }

    private var held: Hold?

    /// Puts `deliveries` back before everything pending, held until the store has written the
    /// change count `through`. The drain stays queued, so no append queues another: the writer
    /// queues it again.
    mutating func hold(_ deliveries: ArraySlice<Delivery>, count: Int, through: UInt64) {
        var front = ContiguousArray(deliveries)
        front.append(contentsOf: pending)
        pending = front
        held = Hold(count: count, through: through)
        drainQueued = true
    }

    /// The hold on the front of what is pending, if there is one, for the drain that takes it.
    mutating func takeHold() -> Hold? {
        defer { held = nil }
        return held
    }

    /// When the last drain ended, to tell a dense stream of events (a drain queued again at
    /// once) from a sparse one.
    var lastDrainEnd: UInt64 = 0
}
