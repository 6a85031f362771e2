/// Events decided under the table's lock, waiting for the delivery queue.
///
/// The table decides events into a buffer of its own, and hands the buffer over at the end of
/// each locked section, in the order the events were decided; the delivery queue takes all
/// that is pending as one batch. A wake-up that decides a thousand events costs one hop to the
/// queue, not a thousand, and the delivery queue never waits for the table's lock. Buffers
/// are swapped, not copied, and reused, so after warm-up no event allocates.
struct Outbox: ~Copyable {
    struct Delivery {
        let slot: ObserverSlot
        let event: CountdownEvent
    }

    private var pending: ContiguousArray<Delivery> = []
    private var spare: ContiguousArray<Delivery> = []
    /// Whether a drain is queued that will take what is pending.
    private var drainQueued = false

    /// Takes every delivery in `decided` (leaving it empty, with room). Returns true when the
    /// caller must queue a drain (none is queued yet).
    mutating func absorb(_ decided: inout ContiguousArray<Delivery>) -> Bool {
        if pending.isEmpty {
            swap(&pending, &decided)
        } else {
            pending.append(contentsOf: decided)
            decided.removeAll(keepingCapacity: true)
        }
        guard !drainQueued else { return false }
        drainQueued = true
        return true
    }

    /// Everything pending, in order, for the drain that is running, after taking back the
    /// buffer of the batch it delivered last. While events keep coming the drain stays queued,
    /// so appends in the meantime queue no second hop. With nothing pending, `staying` keeps
    /// the drain queued (it lingers and will look again); otherwise the drain ends, and the
    /// next absorb queues a new one.
    mutating func take(returning delivered: consuming ContiguousArray<Delivery> = [], staying: Bool = false)
        -> ContiguousArray<Delivery>
    {
        if delivered.capacity > spare.capacity {
            delivered.removeAll(keepingCapacity: true)
            spare = delivered
        }
        if pending.isEmpty && !staying { drainQueued = false }
        let batch = pending
        pending = spare
        spare = []
        return batch
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
    /// change count `through`. The drain stays queued, so no absorb queues another: the writer
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
