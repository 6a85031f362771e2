/// The two words the delivery side shares with the threads that decide, read without the
/// engine's lock, each on a cache line of its own (``LoneAtomic``): stored inline in the engine,
/// so that reading one is no further away than a field.
struct DeliverySignals: Sendable {
    /// Set when a decision put something in the pipeline: a lingering drain reads it after a
    /// gather without taking the lock, which every thread that decides events needs.
    private let filled = LoneAtomic(0)
    /// Every event of a lower ticket has been delivered or dropped: a cancel whose observer has
    /// none above it lets the observer go without revoking it. Stored by the drain alone.
    private let delivered = LoneAtomic(0)

    /// A decision put something in the pipeline. Stored only when clear: a lingering drain
    /// clears it only when it takes the events, so in a dense stream the line stays in the
    /// deciding core's cache, read, not written.
    @inline(__always)
    func markFilled() {
        if filled.word.load(ordering: .relaxed) == 0 { filled.word.store(1, ordering: .releasing) }
    }

    /// The drain is about to take what is pending.
    @inline(__always)
    func clearFilled() { filled.word.store(0, ordering: .relaxed) }

    /// Whether anything was put in the pipeline since the last ``clearFilled()``.
    var wasFilled: Bool { filled.word.load(ordering: .acquiring) != 0 }

    /// Every ticket below it has been delivered or dropped.
    @inline(__always)
    var deliveredBelow: UInt64 { delivered.word.load(ordering: .acquiring) }

    /// The drain delivered every ticket below `ticket`.
    func publish(deliveredBelow ticket: UInt64) { delivered.word.store(ticket, ordering: .releasing) }

    /// What the drain published last; read by the drain alone, which stores it.
    var published: UInt64 { delivered.word.load(ordering: .relaxed) }
}
