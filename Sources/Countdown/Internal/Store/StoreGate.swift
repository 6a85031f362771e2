import CountdownSupport
import Synchronization

/// The store's part of the engine, in one place: the writer ``KeyedCountdownScheduler/restore(from:)``
/// attaches, the write a change asks for, the wait for a write, and the gate a finish passes
/// only once the file no longer holds its countdown.
///
/// It watches what the table decides: a decision that changed what the store keeps (its
/// ``CountdownTable/Actions/persist``, set where the table's change count moves) asks for a
/// write; a batch of deliveries with a finish the file may still hold is held, from that finish
/// on, until a write covers the change count read after it (``unwrittenFinish(in:after:changes:redrain:)``).
/// Without a store, each of those is one atomic load.
final class StoreGate: Sendable {
    /// Set once, by a restore that succeeded. Read without the table's lock, after a look at
    /// `isAttached` (one atomic load when there is no store).
    private let writer = Locked<StoreWriter?>(nil)
    private let isAttached = Atomic<Bool>(false)

    /// The writer, if a store is attached.
    var attached: StoreWriter? {
        guard isAttached.load(ordering: .acquiring) else { return nil }
        return writer.withLock { $0 }
    }

    /// From now on, every change goes to `store`'s writer.
    func attach(_ store: StoreWriter) {
        writer.withLock { $0 = store }
        isAttached.store(true, ordering: .releasing)
    }

    /// A decision changed what the store keeps: the next write carries it. Returns at once.
    func changed() {
        attached?.changed()
    }

    /// Returns once the store, if one is attached, holds every change made before the call.
    func waitUntilStored() {
        attached?.waitUntilWritten()
    }

    /// What of `batch` must wait for the store: from its first finish whose change the file may
    /// still hold, with everything after it, in order. Nil when the batch can be delivered
    /// whole. `previous`: the hold the batch begins with, freed by the write it waited for;
    /// `changes`: reads the table's change count (under its lock), which then covers that
    /// finish's and every other change decided so far. `redrain` makes what runs once the write waited
    /// for is done; each finish waits for a write that began after it, never for a later one,
    /// however busy the table.
    func unwrittenFinish(
        in batch: ContiguousArray<Delivery>, after previous: DeliveryHold?,
        changes: () -> UInt64, redrain makeRedrain: () -> @Sendable () -> Void
    ) -> (index: Int, hold: DeliveryHold)? {
        guard let writer = attached, !writer.store.defects.contains(.finishesBeforeWrite) else { return nil }
        // Made only with a store attached: a drain without one allocates nothing here.
        let redrain = makeRedrain()
        var start = 0
        if let previous {
            // Queued before that write was done (a drain already on its way): hold them again.
            guard writer.whenWritten(previous.through, redrain) else { return (0, previous) }
            start = min(previous.count, batch.count)
        }
        guard let first = batch[start...].firstIndex(where: { $0.event.kind == .finished }) else { return nil }
        let through = changes()
        guard !writer.whenWritten(through, redrain) else { return nil }
        return (first, DeliveryHold(count: batch.count - first, through: through))
    }
}
