import CountdownSupport

/// Writes a table's countdowns to its ``CountdownStore``, as a group commit: a caller that
/// finds its change already written by another returns at once, and one write carries every
/// change made before it read the table.
///
/// Locks: the writer's lock is held through the write, and the table's lock is taken inside it
/// only to read the countdowns; nothing holding the table's lock ever waits for the writer's.
final class StoreWriter: Sendable {
    /// What the table holds, read at one instant: its change count, and the records.
    struct Snapshot {
        let changes: UInt64
        let records: [CountdownRecord]
    }

    let store: CountdownStore
    /// The table's countdowns when they changed since the count given; nil when they did not,
    /// or once the table is shut down (a store keeps what ran before a shutdown).
    private let snapshot: @Sendable (_ changedSince: UInt64) -> Snapshot?
    /// The table's change count the file holds.
    private let written = Locked<UInt64>(0)

    init(store: CountdownStore, snapshot: @escaping @Sendable (UInt64) -> Snapshot?) {
        self.store = store
        self.snapshot = snapshot
    }

    /// Returns once the file holds every change made before the call.
    func persist() {
        written.withLock { written in
            guard let snapshot = snapshot(written) else { return }
            store.write(snapshot.records)
            written = snapshot.changes
        }
    }
}
