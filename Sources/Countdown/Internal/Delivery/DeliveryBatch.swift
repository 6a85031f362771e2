/// What one take of a drain holds: the events pending, in order, and the first fires to file.
/// Its buffers go back and forth between the drain and the ``DeliveryPipeline``, emptied by the
/// drain with no lock held, so that after warm-up an event allocates nothing.
package struct DeliveryBatch<Item> {
    package var deliveries: ContiguousArray<Item> = []
    /// Every ticket below it is in these deliveries or was taken before.
    package var through: UInt64 = 0
    /// First fires to file before anything is delivered.
    var firstFires: ContiguousArray<DueItem> = []
    /// Buffers grown past ``DeliveryPipeline/keptCapacity``, not reused: the drain lets go of
    /// them after the lock.
    var oversized: ContiguousArray<Item> = []
    var oversizedFirstFires: ContiguousArray<DueItem> = []

    /// Whether it holds a buffer a backlog grew, for the drain to let go of after the lock.
    package var holdsOversized: Bool { oversized.capacity > 0 || oversizedFirstFires.capacity > 0 }

    package init() {}

    /// Lets go of the buffers a take did not keep; called with no lock held.
    package mutating func releaseOversized() {
        if oversized.capacity > 0 { oversized = [] }
        if oversizedFirstFires.capacity > 0 { oversizedFirstFires = [] }
    }
}

extension DeliveryBatch: Sendable where Item: Sendable {}
