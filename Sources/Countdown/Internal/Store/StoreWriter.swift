import CountdownSupport
import Dispatch

/// Writes a table's countdowns to its ``CountdownStore`` in the background, as a group commit.
///
/// A change asks for a write and returns at once: no caller waits for the disk (in an app the
/// caller is the main thread). One write carries every change made before it read the table;
/// changes made while it runs are carried by the next. Whoever must know that the file holds a
/// change asks to be told (``whenWritten(_:_:)``: a finish held back from its observer) or
/// waits for it (``waitUntilWritten()``: the app going to the background, a shutdown).
///
/// Writes run one at a time on a serial queue of their own, and while changes keep coming the
/// writer rests between them (``restPerWrite``). The writer's lock is held only to decide,
/// never during a write; the table's lock is taken only to read the countdowns.
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
    /// The table's change count now; nil once it is shut down.
    private let changeCount: @Sendable () -> UInt64?
    /// Where writes run, one at a time: a queue of its own, or virtual time's list of writes.
    private let executor: WriteExecutor
    private let state = Locked(State())

    private struct State {
        /// The table's change count the file holds.
        var written: UInt64 = 0
        /// A write is queued or running.
        var isWriting = false
        /// Asked for since the running write read the table: it writes again.
        var isDirty = false
        var waiters: [Waiter] = []
    }

    private struct Waiter {
        let changes: UInt64
        let resume: @Sendable () -> Void
    }

    init(
        store: CountdownStore, executor: WriteExecutor, snapshot: @escaping @Sendable (UInt64) -> Snapshot?,
        changeCount: @escaping @Sendable () -> UInt64?
    ) {
        self.store = store
        self.executor = executor
        self.snapshot = snapshot
        self.changeCount = changeCount
    }

    /// A change was made: the next write carries it. Returns at once.
    func changed() {
        if state.withLock({ Self.requestWrite(&$0) }) { queueWrites() }
    }

    /// Runs `resume` once the file holds the table's change count `changes` (or the table is
    /// shut down); returns true instead, running nothing, when it already does.
    func whenWritten(_ changes: UInt64, _ resume: @escaping @Sendable () -> Void) -> Bool {
        let (isWritten, queue) = state.withLock { state -> (Bool, Bool) in
            guard state.written < changes else { return (true, false) }
            state.waiters.append(Waiter(changes: changes, resume: resume))
            return (false, Self.requestWrite(&state))
        }
        if queue { queueWrites() }
        return isWritten
    }

    /// Returns once the file holds every change made before the call.
    func waitUntilWritten() {
        guard !store.defects.contains(.waitReturnsEarly), let changes = changeCount() else { return }
        executor.wait { signal in whenWritten(changes, signal) }
    }

    /// Writes `last`, the table's countdowns at its shutdown, after any write under way, and
    /// returns once the file holds it. Nothing is written after it (the shut-down table gives no
    /// more snapshots), so nothing is waited for any more: whoever waits is let go, and whoever
    /// asks later is told at once. (The shutdown's own changes, the cancelled countdowns, are
    /// never written: a finish decided before it would otherwise wait for a write forever.)
    func writeLast(_ last: Snapshot) {
        executor.writeNow {
            let isNewer = state.withLock { $0.written < last.changes }
            if isNewer { store.write(last.records) }
            let waiters = state.withLock { state in
                state.written = .max
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    /// Marks a write as owed; true when the caller must queue the writing (none is queued).
    private static func requestWrite(_ state: inout State) -> Bool {
        if state.isWriting {
            state.isDirty = true
            return false
        }
        state.isWriting = true
        return true
    }

    private func queueWrites() {
        executor.write { [self] in writeOnce() }
    }

    /// How long the writer rests after a write, for each unit of CPU time the write took, while
    /// changes keep coming: it spends at most a fifth of a core writing. Each write costs the
    /// whole file, so a table that changes all the time would otherwise keep a core busy
    /// rewriting it; a finish waits for about six writes' CPU time instead of two. CPU time,
    /// not the time the write took: a write that waited for a slow disk cost no CPU, and
    /// resting four times that wait would hold finishes back for nothing.
    static var restPerWrite: Int { 4 }

    /// Reads the table once, writes everything it holds, tells the waiters the file now covers,
    /// and, when changes came meanwhile, queues the next write after a rest.
    private func writeOnce() {
        let written = state.withLock { state in
            state.isDirty = false
            return state.written
        }
        let began = SystemClocks.threadCPU()
        let snapshot = snapshot(written)
        if let snapshot { store.write(snapshot.records) }
        let cost = SystemClocks.threadCPU() &- began
        let (ready, isClean) = state.withLock { state -> ([Waiter], Bool) in
            if let snapshot { state.written = max(state.written, snapshot.changes) }
            // No snapshot: nothing changed since the last write, which covers every waiter that
            // asked before this one read the table (one that asked later made it dirty), or the
            // table is shut down, and its last write lets everyone go.
            let covered = state.written
            var ready: [Waiter] = []
            state.waiters.removeAll { waiter in
                guard waiter.changes <= covered else { return false }
                ready.append(waiter)
                return true
            }
            let isClean = !state.isDirty
            if isClean { state.isWriting = false }
            return (ready, isClean)
        }
        for waiter in ready { waiter.resume() }
        guard !isClean else { return }
        executor.write(after: min(cost, 1_000_000_000) * UInt64(Self.restPerWrite)) { [self] in writeOnce() }
    }
}
