import CountdownSupport
import Dispatch
import Foundation
import Synchronization

/// The driver of the keyed bookkeeping every backend shares: it takes the lock, reads the
/// clock, lets the ``CountdownTable`` decide, releases the lock, and only then does what the
/// table decided: hands the events to the ``Outbox`` (in the order of the decisions' tickets),
/// arms and disarms the mechanism's timers (or hands the arms to the outbox with the events,
/// for the drain to file, when the mechanism's timer fires on the delivery queue), revokes
/// observers, ends streams, asks the store for a write, queues a drain of the delivery queue.
/// A backend adds only its timing ``CountdownMechanism``.
///
/// Instants are read with the lock held: read before it, they would be stale by however long
/// the lock took, and a progress that also reads another clock would disagree with them.
/// Observers are called on the delivery queue without the lock, through an ``ObserverSlot``,
/// so they may call back in; so may the mechanism's hooks.
final class KeyedCountdowns<Mechanism: CountdownMechanism>: Sendable {
    typealias Table = CountdownTable<Mechanism.Progress, Mechanism.Handle>
    typealias FireResult = Table.FireResult
    typealias WorkerStep = Table.WorkerStep

    let settings: SchedulerSettings
    let mechanism: Mechanism
    private let table: Locked<Table>
    /// The table's key hasher, which never changes: a call hashes its key before the lock.
    private let keyHasher: KeyHash
    /// The events decided, for the delivery queue: a lock of its own, taken after the table's
    /// is released, so a drain never waits for a decision.
    private let outbox = Locked(Outbox())
    /// Set when events are handed to the outbox: a lingering drain reads it without taking the
    /// outbox's lock, which every thread that decides events needs. (Each of the drain's
    /// words is on a line of its own: the fields here are read on every call.)
    private let outboxFilled = LoneAtomic(0)
    /// Every event of a lower ticket has been delivered or dropped: a cancel whose observer has
    /// none above it lets the observer go without revoking it. Stored by the drain alone.
    private let deliveredBelow = LoneAtomic(0)
    /// Writes every change to the store ``restore(from:)`` attached; set once. Read without
    /// the table's lock, after a look at `hasWriter` (one atomic load when there is no store).
    private let writer = Locked<StoreWriter?>(nil)
    private let hasWriter = Atomic<Bool>(false)

    init(settings: SchedulerSettings, mechanism: Mechanism) {
        self.settings = settings
        self.mechanism = mechanism
        let table = Table(rules: .init(
            tick: settings.tickInterval, maximumDuration: settings.maximumDuration, capacity: settings.capacity,
            keepsHandles: mechanism.keepsHandles, keepsHandleWhilePaused: mechanism.keepsHandleWhilePaused,
            disarmsEachOnShutdown: mechanism.disarmsEachOnShutdown,
            filesArmsWithEvents: mechanism.filesArmsOnDeliveryQueue))
        precondition(
            !(mechanism.filesArmsOnDeliveryQueue && mechanism.keepsHandles),
            "arms filed on the delivery queue hand back no handle")
        keyHasher = table.keyHasher
        self.table = Locked(table)
        mechanism.bind(to: self)
    }

    // MARK: - The scheduler's API

    func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        // Hashed before the lock, and its index line fetched while the clocks are read.
        let hash = KeyIndex.Hash(key, hasher: keyHasher)
        let slot = ObserverSlot(observer)
        var actions = Table.Actions()
        let answer = try table.withLock { table throws(CountdownError) in
            table.prefetch(hash)
            return try table.start(key: key, hash: hash, duration: duration, observer: slot, now: mechanism.now(), &actions)
        }
        carryOut(&actions)
        return answer
    }

    func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        attach(key: key, slot: ObserverSlot(observer))
    }

    /// `ended`: how to end the stream `slot` feeds, when it is revoked.
    private func attach(key: String, slot: ObserverSlot, ended: (@Sendable () -> Void)? = nil) -> Duration? {
        var decision = table.withLock { $0.attach(key: key, observer: slot, ended: ended, now: mechanism.now()) }
        let answer = decision.answer
        carryOut(&decision.actions)
        return answer
    }

    /// A stream attached as `attach` attaches an observer. It ends after the finish, or when
    /// the countdown is cancelled, replaced by another observer or shut down; a consumer that
    /// goes away detaches, and the countdown runs on with no observer.
    ///
    /// Unbounded: a consumer that falls behind is owed at most the countdown's ticks.
    func events(key: String) -> AsyncStream<CountdownEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: CountdownEvent.self)
        let slot = ObserverSlot { event in
            continuation.yield(event)
            if event.kind == .finished { continuation.finish() }
        }
        continuation.onTermination = { [weak self, weak slot] termination in
            guard case .cancelled = termination, let slot, let self else { return }
            var decision = self.table.withLock { $0.detach(key: key, observer: slot) }
            self.carryOut(&decision.actions)
        }
        if attach(key: key, slot: slot, ended: { continuation.finish() }) == nil { continuation.finish() }
        return stream
    }

    func cancel(key: String) -> Bool {
        // Without a queue of deliveries (virtual time), nothing drops a retired observer soon.
        let delivered = mechanism.queuesDeliveries ? deliveredBelow.word.load(ordering: .acquiring) : 0
        let hash = KeyIndex.Hash(key, hasher: keyHasher)
        var actions = Table.Actions()
        let answer = table.withLock { $0.cancel(key: key, hash: hash, deliveredBelow: delivered, &actions) }
        carryOut(&actions)
        return answer
    }

    func pause(key: String) -> Bool {
        var decision = table.withLock { $0.pause(key: key, now: mechanism.now()) }
        let answer = decision.answer
        carryOut(&decision.actions)
        return answer
    }

    func resume(key: String) -> Bool {
        var decision = table.withLock { $0.resume(key: key, now: mechanism.now()) }
        let answer = decision.answer
        carryOut(&decision.actions)
        return answer
    }

    func remaining(key: String) -> Duration? {
        table.withLock { $0.remaining(key: key, now: mechanism.now()) }
    }

    /// The slot observing the countdown under `key`: what the table still holds of an
    /// observer (``ObserverSlot/silent`` when nobody observes it). For tests.
    func observerSlot(key: String) -> ObserverSlot? {
        table.withLock { $0.observer(of: key) }
    }

    var activeKeys: [String] { table.withLock { $0.activeKeys } }

    var activeCount: Int { table.withLock { $0.activeCount } }

    // MARK: - The app's lifecycle

    /// Marks, in every running countdown that counts ticks, the time the app went to the
    /// background (nothing to do for a progress that reads a clock), then waits until the
    /// store, if one is attached, holds every change: the process may be frozen and killed
    /// from here on.
    func enteredBackground() {
        defer { waitUntilStored() }
        guard Mechanism.Progress.countsTicks else { return }
        var decision = table.withLock { $0.enteredBackground(now: mechanism.now(), boot: SystemClocks.continuous()) }
        carryOut(&decision.actions)
    }

    /// Takes off, in every countdown marked at the background, the time its ticks did not
    /// count; tells its observer the corrected remaining time (or the finish), and moves its
    /// timer onto the corrected grid.
    func enteredForeground() {
        guard Mechanism.Progress.countsTicks else { return }
        var decision = table.withLock { $0.enteredForeground(now: mechanism.now(), boot: SystemClocks.continuous()) }
        carryOut(&decision.actions)
    }

    // MARK: - The store

    /// Restores the countdowns `store` keeps, then writes every change to it. See
    /// ``KeyedCountdownScheduler/restore(from:)``.
    func restore(from store: CountdownStore) throws(CountdownStoreError) -> CountdownRestoration {
        try store.claim()
        var decision: Table.Decision<CountdownRestoration>
        do throws(CountdownStoreError) {
            let records = try store.read()
            let clocks = store.clocks
            let writer = StoreWriter(store: store) { [weak self] written in
                self?.snapshot(changedSince: written, clocks: clocks)
            } changeCount: { [weak self] in
                self?.table.withLock { $0.isShutDown ? nil : $0.changes }
            }
            decision = try table.withLock { table throws(CountdownStoreError) in
                // The store's clocks first, the scheduler's last: the time left is read at the
                // earlier instant and counted from the later one, so a restored deadline is
                // never early (a snapshot reads them the other way round, for the same reason).
                let wall = clocks.wall(), boot = clocks.boot()
                return try table.restore(
                    records, now: mechanism.now(), wall: wall, boot: boot, bootID: clocks.bootID, storePath: store.path)
            }
            // Attached only once the restore succeeded (a refused one leaves the file as it
            // is), and before the restored countdowns are armed. A change made in between is
            // carried by the write this restore asks for, which reads the whole table.
            self.writer.withLock { $0 = writer }
            hasWriter.store(true, ordering: .releasing)
        } catch {
            store.release()
            throw error
        }
        let restoration = decision.answer
        carryOut(&decision.actions)
        // Written before returning: the expired countdowns leave the file at launch.
        waitUntilStored()
        return restoration
    }

    /// What the store keeps of every countdown, read at one instant; nil when nothing changed
    /// since `written`, or once shut down. The scheduler's clock first, the store's last.
    private func snapshot(changedSince written: UInt64?, clocks: StoreClocks) -> StoreWriter.Snapshot? {
        table.withLock { table in
            let now = mechanism.now()
            return table.snapshot(changedSince: written, now: now, wall: clocks.wall(), boot: clocks.boot(), bootID: clocks.bootID)
        }
    }

    /// The store, if one is attached.
    private var storeWriter: StoreWriter? {
        guard hasWriter.load(ordering: .acquiring) else { return nil }
        return writer.withLock { $0 }
    }

    /// Returns once the store, if one is attached, holds every change made before the call.
    func waitUntilStored() {
        storeWriter?.waitUntilWritten()
    }

    func shutdown() {
        let writer = storeWriter
        // What runs at this instant is what the store keeps for the next launch.
        var (decision, last) = table.withLock { table -> (Table.Decision<Bool>, StoreWriter.Snapshot?) in
            guard !table.isShutDown else { return (Table.Decision(answer: false), nil) }
            let last = writer.flatMap { writer in
                let now = mechanism.now(), clocks = writer.store.clocks
                return table.snapshot(changedSince: nil, now: now, wall: clocks.wall(), boot: clocks.boot(), bootID: clocks.bootID)
            }
            return (table.shutdown(), last)
        }
        guard decision.answer else { return }
        if let last { writer?.writeLast(last) }
        carryOut(&decision.actions, persist: false)
    }

    // MARK: - Called by the mechanisms

    /// A timer fired for `id`. Each call is one fire: a tick-counting progress takes a tick
    /// off, whatever the time, or `intervals` ticks when the timer says it missed some.
    func fire(_ id: CountdownID, intervals: Int = 1) -> FireResult {
        var decision = table.withLock { $0.fire(id, now: mechanism.now(), intervals: intervals) }
        let answer = decision.answer
        carryOut(&decision.actions)
        return answer
    }

    /// Many fires at one wake-up of a mechanism that drives every countdown from one place.
    /// `batch` holds the countdowns due, earliest first; on return it holds those that
    /// continue, each with its next fire. The lock is taken once per ``batchChunk`` fires, not
    /// per fire, and not for the whole batch: at a million countdowns a batch is thousands of
    /// fires, and a `start` waiting behind all of them would wait milliseconds. Returns whether
    /// a drain is owed: the caller, which runs on the delivery queue, then calls
    /// ``deliverDecided()`` instead of waiting for a hop to the queue it is already on.
    func fire(_ batch: inout [DueItem]) -> Bool {
        var owed = false
        var kept = 0
        var next = 0
        while next < batch.count {
            let chunk = next..<min(next + Self.batchChunk, batch.count)
            next = chunk.upperBound
            var decision = table.withLock { $0.fire(&batch, chunk, kept: &kept, now: mechanism.now()) }
            owed = carryOut(&decision.actions, drain: false) || owed
        }
        batch.removeLast(batch.count - kept)
        return owed
    }

    /// How many fires of one batch are decided under one acquisition of the lock.
    private static var batchChunk: Int { 256 }

    /// For a worker that sleeps between fires (the operation-queue backend): fires if the
    /// next fire is due, and says what to do next. Spurious wake-ups are harmless.
    func workerStep(_ id: CountdownID) -> WorkerStep {
        var decision = table.withLock { $0.workerStep(id, now: mechanism.now()) }
        let answer = decision.answer
        carryOut(&decision.actions)
        return answer
    }

    // MARK: - Acting on a decision (no lock held)

    /// Does what a decision left to do: its events to the outbox, then its effects in order.
    /// `drain`: queue the drain the events owe; false when the caller, on the delivery queue,
    /// delivers them itself. Returns whether a drain was owed. (Taken `inout`, so that nothing
    /// is copied on the way.)
    @discardableResult
    private func carryOut(_ actions: inout Table.Actions, persist: Bool = true, drain: Bool = true) -> Bool {
        var owed = false
        if !actions.events.isEmpty || !actions.arms.isEmpty {
            let ticket = actions.ticket
            owed = outbox.withLock { $0.absorb(&actions.events, ticket: ticket, arms: &actions.arms) }
            // Stored only when clear: a lingering drain clears it only when it takes the events,
            // so in a dense stream the line stays in this core's cache, read, not written.
            if outboxFilled.word.load(ordering: .relaxed) == 0 { outboxFilled.word.store(1, ordering: .releasing) }
        }
        if let slot = actions.retired {
            actions.retired = nil
            // Dropped here, after the lock, only when no drain is queued to drop it.
            if !outbox.withLock({ $0.retire(slot) }) { slot.release() }
        }
        actions.effects.removeAll { perform($0) }
        if persist && actions.persist { storeWriter?.changed() }
        if drain && owed && mechanism.queuesDeliveries { queueDrain() }
        return owed
    }

    private func perform(_ effect: Table.Effect) {
        switch effect {
        case .arm(let id, let key, let firstFire):
            let handle = mechanism.arm(id, key: key, firstFire: firstFire, table: self)
            // Kept if the countdown is still armed so; otherwise the table has it disarmed.
            if mechanism.keepsHandles {
                var kept = table.withLock { $0.keep(handle, for: id) }
                carryOut(&kept.actions)
            }
        case .disarm(let handle): mechanism.disarm(handle)
        case .wake(let handle): mechanism.wake(handle)
        case .shorten(let handle, let nextFire): mechanism.shorten(handle, nextFire: nextFire)
        case .revoke(let slot): slot.revoke()
        case .silence(let slot, let below): slot.silence(below: below)
        case .endStream(let end): end()
        case .shutDownMechanism: mechanism.shutdown()
        case .makeRoom: makeRoom()
        }
    }

    /// Makes room for more places and hands it to the table. Allocated here, from the caller's
    /// heap as the places an append makes; in real time (deliveries queued) its memory is
    /// faulted in first, so that neither the starts that fill it nor the table's lock wait for
    /// a page fault per 4 KiB. That is done on a thread of its own that runs only on a core
    /// nothing else wants: the ticker, the delivery queue and the starts preempt it, and when
    /// they leave it no time the room comes late and the appends fault the pages in, as
    /// without it. In virtual time, which has no thread to spare, the room is handed over at
    /// once and faults in as it fills.
    private func makeRoom() {
        guard mechanism.queuesDeliveries else { return provide(Table.makeRoom()) }
        // Handed to the thread in a box it empties: a copy left in its closure, which lives as
        // long as the `Thread`, would make the table's first append copy the room.
        let handoff = Locked<Table.Room?>(Table.makeRoom())
        let maker = Thread { [weak self] in
            nameCurrentThread(Self.roomMakerName)
            lowerCurrentThreadToIdlePriority()
            guard let room = handoff.withLock({ $0.take() }) else { return }
            room.faultIn()
            self?.provide(room)
        }
        maker.qualityOfService = .background
        maker.start()
    }

    /// At most 15 characters: Linux refuses longer thread names.
    static var roomMakerName: String { "countdown-room" }

    /// Whether room for more places, made ahead, waits in the table.
    var holdsRoomAhead: Bool { table.withLock { $0.holdsRoomAhead } }

    private func provide(_ room: sending Table.Room) {
        var room: Table.Room? = room
        table.withLock { $0.provide(&room) }
        // Not wanted after all: let go of here, after the lock.
        room = nil
    }

    // MARK: - Delivery (on the delivery queue)

    /// `continuing`: queued by a lingering drain that handed the queue back (``turn``): it
    /// lingers on, in the same dense stream.
    private func queueDrain(continuing: Bool = false) {
        settings.deliveryQueue.async { [self] in drain(lingering: mechanism.deliveryMayLinger, continuing: continuing) }
    }

    /// Delivers every event decided so far, at once (after a ``turn``, what is left goes to a
    /// drain queued again); only on the delivery queue.
    func deliverDecided() {
        dispatchPrecondition(condition: .onQueue(settings.deliveryQueue))
        drain(lingering: false)
    }

    /// A drain queued within this long after the last one ended is in a dense stream of events
    /// (above 100 000 a second), and lingers: there, a wake-up of the delivery queue's thread
    /// per event costs more than one per gather.
    private static var linger: UInt64 { 10_000 }

    /// How long a lingering drain's thread sleeps to let events gather before it looks for them
    /// again (Linux adds its timer slack, 50 µs by default): events in a dense stream are heard
    /// up to that much later. It sleeps, not spins: a spinning drain slowed the thread deciding
    /// the events by a tenth on average and up to twice in some runs (a million starts, two
    /// cores), and each look and each take pulls the outbox's cache lines from that thread's
    /// core. One sleep, one wake-up, covers every event decided meanwhile.
    private static var gather: UInt64 { 20_000 }

    /// How long a drain holds the delivery queue, between two batches, before it hands it back:
    /// it queues itself again and ends, so that whatever was queued behind it runs first (the
    /// ticker's wake-up, which waits for the queue; an app's own work on its main queue).
    /// Without it, a drain in a stream that stayed dense held every wake-up until the stream
    /// ended: ticks came the whole stream late (770 ms behind a second of starts and cancels).
    /// A turn costs one `async`: a microsecond or so every half millisecond. (A batch is
    /// delivered whole: a slow observer still delays what comes after it.)
    private static var turn: UInt64 { 500_000 }

    /// Delivers everything decided so far, in order, and what is decided while it runs, until
    /// nothing is left. A slot revoked meanwhile (cancel, attach, shutdown) stays silent.
    ///
    /// After a ``turn`` it hands the queue back, and a drain queued again goes on; not in
    /// virtual time (no queued deliveries), where `advance` returns once everything due ran.
    ///
    /// `lingering`: when this drain was queued within ``linger`` of the last one's end (or by a
    /// lingering drain, `continuing`), it sleeps ``gather`` and looks again before it ends, so
    /// that a dense stream of events (a million starts in a second) costs a wake-up per gather,
    /// not per event. Only for a mechanism that says ``CountdownMechanism/deliveryMayLinger``.
    private func drain(lingering: Bool, continuing: Bool = false) {
        let began = SystemClocks.monotonic()
        outboxFilled.word.store(0, ordering: .relaxed)
        var batch = Outbox.Batch()
        var (previousHold, dense) = outbox.withLock { outbox in
            outbox.reuseBatch(&batch)
            let dense = continuing || began &- outbox.lastDrainEnd < Self.linger
            // Stays queued only if it will linger: a drain that found nothing and ends at once
            // must leave the next absorb (or retire) to queue another.
            outbox.take(into: &batch, staying: lingering && dense)
            return (outbox.takeHold(), dense)
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
            // Dropped here, with no lock held: an observer may go with them.
            for slot in batch.retired { slot.release() }
            batch.retired.removeAll(keepingCapacity: true)
            let delivering = !batch.deliveries.isEmpty
            if delivering {
                // A finish is heard only once the store no longer holds its countdown: it
                // waits, with what came after it, for the write, and the queue is free meanwhile.
                if let (index, hold) = unwrittenFinish(in: batch.deliveries, after: previousHold) {
                    for delivery in batch.deliveries[..<index] {
                        delivery.slot.deliver(delivery.event, generation: delivery.generation)
                    }
                    outbox.withLock { $0.hold(batch.deliveries[index...], count: hold.count, through: hold.through) }
                    return
                }
                previousHold = nil
                for delivery in batch.deliveries { delivery.slot.deliver(delivery.event, generation: delivery.generation) }
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
                outbox.withLock { $0.keepBatch(&batch) }
                return
            }
            // A batch of arms alone is something taken, as events are: the drain looks again.
            if !delivering && !filing {
                guard lingering && dense else {
                    outbox.withLock { outbox in
                        outbox.lastDrainEnd = SystemClocks.monotonic()
                        outbox.keepBatch(&batch)
                    }
                    return
                }
                // Lets events gather while the thread sleeps, then reads the flag, not the lock:
                // with nothing come meanwhile the stream is no longer dense, and the drain ends.
                SystemClocks.sleep(untilMonotonic: SystemClocks.monotonic() &+ Self.gather)
                if outboxFilled.word.load(ordering: .acquiring) == 0 { dense = false }
            }
            let staying = lingering && dense
            if mechanism.queuesDeliveries && previousHold == nil && SystemClocks.monotonic() &- began >= Self.turn {
                // The next drain is queued before the last take, which stays (that drain will
                // take what comes next): a block queued before this point runs after every event
                // decided before it was delivered (one hop, as when no drain hands back), and
                // one queued after it runs after the next drain.
                queueDrain(continuing: staying)
                handedBack = true
            }
            outboxFilled.word.store(0, ordering: .relaxed)
            outbox.withLock { $0.take(into: &batch, staying: staying || handedBack) }
        }
    }

    /// What of `batch` must wait for the store: from its first finish whose change the file may
    /// still hold, with everything after it, in order (a finish is heard only once the file no
    /// longer holds its countdown). Nil when the batch can be delivered whole. `previous`: the
    /// hold the batch begins with, freed by the write it waited for. The writer queues the
    /// drain again once the write waited for is done; each finish waits for a write that began
    /// after it, never for a later one, however busy the table.
    private func unwrittenFinish(in batch: ContiguousArray<Outbox.Delivery>, after previous: Outbox.Hold?)
        -> (index: Int, hold: Outbox.Hold)?
    {
        guard let writer = storeWriter else { return nil }
        let redrain: @Sendable () -> Void = { [weak self] in self?.queueDrain() }
        var start = 0
        if let previous {
            // Queued before that write was done (a drain already on its way): hold them again.
            guard writer.whenWritten(previous.through, redrain) else { return (0, previous) }
            start = min(previous.count, batch.count)
        }
        guard let first = batch[start...].firstIndex(where: { $0.event.kind == .finished }) else { return nil }
        // The change count now covers that finish's, and every other decided so far.
        let through = table.withLock { $0.changes }
        guard !writer.whenWritten(through, redrain) else { return nil }
        return (first, Outbox.Hold(count: batch.count - first, through: through))
    }
}
