import CountdownSupport
import Dispatch
import Synchronization

/// The keyed bookkeeping every backend shares: key → countdown, attach, cancel, pause and
/// resume, validation, and delivery on the scheduler's serial queue. A backend adds only its
/// timing ``CountdownMechanism``.
///
/// Countdowns live in a slab: a countdown is a place (an integer) in a chunked array, found
/// from its key through a sharded dictionary, and timers name it by place, never by key, so a fire costs no
/// hashing. Freed places are reused; a place's `serial` and `arm` outlive its occupants, so a
/// timer of an earlier occupant is recognised as stale.
///
/// Instants are read with the lock held: read before it, they would be stale by however long
/// the lock took, and a progress that also reads another clock would disagree with them.
///
/// Events are decided into a buffer while the lock is held and handed to the ``Outbox`` before
/// it is released, so the order in which they were decided is the order in which the delivery
/// queue runs them, and one hop to that queue carries every event decided before it runs.
/// Observers are called without either lock, through an ``ObserverSlot``, so they may call
/// back in.
final class KeyedCountdowns<Mechanism: CountdownMechanism>: Sendable {
    /// A place in the slab: everything a countdown keeps, side by side, so that reaching a
    /// countdown at random (a start, a cancel, a fire) costs one or two cache lines. Not an
    /// optional: fields of an empty place keep harmless values, and every access is in place.
    /// `serial` and `arm` outlive the place's occupants.
    private struct Place {
        var serial: UInt32 = 0
        var arm: UInt32 = 0
        var isOccupied = false
        var isPaused = false
        var key = ""
        var slot: ObserverSlot?
        var progress: Mechanism.Progress
        var handle: Mechanism.Handle?
    }

    private struct State: ~Copyable {
        var indexByKey = KeyIndex()
        var places = ChunkedArray<Place>()
        var freePlaces: [UInt32] = []
        /// Events decided in the current locked section, for the outbox.
        var decided: ContiguousArray<Outbox.Delivery> = []
        /// How to end the event stream each attached stream's slot feeds. Kept here, not in
        /// every slot: a slot is read on every delivery, and a million of them stay smaller.
        var streamEnds: [ObjectIdentifier: @Sendable () -> Void] = [:]
        var isShutDown = false
        /// Counts the changes a store keeps: a countdown started, restored, ended, paused,
        /// resumed, or corrected at the foreground.
        var changes: UInt64 = 0
        /// Whether a store was attached (``KeyedCountdowns/restore(from:)``).
        var hasStore = false
        /// Between ``KeyedCountdowns/enteredBackground()`` and the foreground.
        var isInBackground = false

        /// The place of the countdown armed as `id` says, if it is still armed so.
        func armed(_ id: CountdownID) -> Int? {
            let index = Int(id.index)
            guard index < places.count, places[index].arm == id.arm, places[index].isOccupied else { return nil }
            return index
        }

        /// The place of the running or paused countdown under `key`.
        func place(of key: String) -> Int? {
            indexByKey[key].map(Int.init)
        }

        /// One probe of the dictionary: the place of the countdown under `key`, or nil after
        /// entering `key` for the place ``occupy(key:slot:progress:)`` takes next.
        mutating func placeOrReserve(_ key: String) -> Int? {
            indexByKey.valueOrInsert(key, freePlaces.last ?? UInt32(places.count)).map(Int.init)
        }

        /// Occupies the place ``placeOrReserve(_:)`` entered `key` for.
        mutating func occupy(key: String, slot: ObserverSlot, progress: Mechanism.Progress) -> CountdownID {
            let index: Int
            if let free = freePlaces.popLast() {
                index = Int(free)
                places[index].key = key
                places[index].slot = slot
                places[index].progress = progress
            } else {
                index = places.count
                places.append(Place(key: key, slot: slot, progress: progress))
            }
            places[index].isOccupied = true
            places[index].isPaused = false
            places[index].serial &+= 1
            places[index].arm &+= 1
            changes &+= 1
            return id(of: index)
        }

        /// Empties the place, and returns what the countdown held; every id that named the
        /// place becomes stale. `keyRemoved`: the caller already took the key out of the index.
        mutating func vacate(_ index: Int, keyRemoved: Bool = false) -> (key: String, slot: ObserverSlot, handle: Mechanism.Handle?) {
            let key = places[index].key
            let slot = places[index].slot.take()!
            let handle = places[index].handle.take()
            places[index].key = ""
            places[index].isOccupied = false
            places[index].serial &+= 1
            places[index].arm &+= 1
            changes &+= 1
            if !keyRemoved { indexByKey.removeValue(forKey: key) }
            freePlaces.append(UInt32(index))
            return (key, slot, handle)
        }

        /// Silences `slot`; a stream it fed ends. Ending a stream calls its termination handler
        /// at once, which ignores an end it did not ask for, so this is safe with the lock held.
        mutating func revoke(_ slot: ObserverSlot) {
            slot.revoke()
            if !streamEnds.isEmpty, let end = streamEnds.removeValue(forKey: ObjectIdentifier(slot)) { end() }
        }

        /// `slot`'s countdown finished: its stream ends with the finish it is about to hear.
        mutating func finished(_ slot: ObserverSlot) {
            if !streamEnds.isEmpty { streamEnds.removeValue(forKey: ObjectIdentifier(slot)) }
        }

        mutating func rearm(_ index: Int) -> CountdownID {
            places[index].arm &+= 1
            return id(of: index)
        }

        func id(of index: Int) -> CountdownID {
            CountdownID(index: UInt32(index), serial: places[index].serial, arm: places[index].arm)
        }
    }

    let settings: SchedulerSettings
    let mechanism: Mechanism
    private let state = Locked(State())
    private let outbox = Locked(Outbox())
    /// Set when events are handed to the outbox: a lingering drain watches it without taking
    /// the outbox's lock, which every thread that decides events needs.
    private let outboxFilled = Atomic<Bool>(false)
    /// Writes every change to the store ``restore(from:)`` attached; set once. Read without
    /// the table's lock, after a look at `hasWriter` (one atomic load when there is no store).
    private let writer = Locked<StoreWriter?>(nil)
    private let hasWriter = Atomic<Bool>(false)

    init(settings: SchedulerSettings, mechanism: Mechanism) {
        self.settings = settings
        self.mechanism = mechanism
        mechanism.bind(to: self)
    }

    // MARK: - The scheduler's API

    func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        guard !key.isEmpty else { throw .emptyKey }
        guard duration > .zero else { throw .nonPositiveDuration(duration) }
        guard duration <= settings.maximumDuration else {
            throw .durationAboveMaximum(duration, maximum: settings.maximumDuration)
        }
        let (result, drain) = try state.withLock { state throws(CountdownError) -> (CountdownStart, Bool) in
            let now = mechanism.now()
            guard !state.isShutDown else { throw .shutDown }
            if let index = state.placeOrReserve(key) {
                let remaining = attach(at: index, slot: ObserverSlot(observer), at: now, in: &state)
                return (.attached(remaining: remaining), flush(&state))
            }
            if let capacity = settings.capacity, state.indexByKey.count > capacity {
                state.indexByKey.removeValue(forKey: key)
                throw .capacityExceeded(capacity: capacity)
            }
            let progress = mechanism.makeProgress(duration: duration, at: now)
            let slot = ObserverSlot(observer)
            let id = state.occupy(key: key, slot: slot, progress: progress)
            state.places[Int(id.index)].handle = mechanism.arm(id, key: key, firstFire: progress.nextFire, table: self)
            state.decided.append(.init(slot: slot, event: .tick(key, duration)))
            return (.started, flush(&state))
        }
        if result == .started { storeChanged() }
        if drain { queueDrain() }
        return result
    }

    func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        attach(key: key, slot: ObserverSlot(observer))
    }

    /// `ended`: how to end the stream `slot` feeds, when it is revoked.
    private func attach(key: String, slot: ObserverSlot, ended: (@Sendable () -> Void)? = nil) -> Duration? {
        let (remaining, drain) = state.withLock { state -> (Duration?, Bool) in
            guard let index = state.place(of: key) else { return (nil, false) }
            if let ended { state.streamEnds[ObjectIdentifier(slot)] = ended }
            return (attach(at: index, slot: slot, at: mechanism.now(), in: &state), flush(&state))
        }
        if drain { queueDrain() }
        return remaining
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
            guard case .cancelled = termination, let slot else { return }
            self?.detach(key: key, slot: slot)
        }
        if attach(key: key, slot: slot, ended: { continuation.finish() }) == nil { continuation.finish() }
        return stream
    }

    /// Takes `slot`'s observer off the countdown under `key`, if it is still the one observing
    /// it; the countdown runs on, observed by no one.
    private func detach(key: String, slot: ObserverSlot) {
        state.withLock { state in
            guard let index = state.place(of: key), state.places[index].slot === slot else { return }
            state.revoke(slot)
            state.places[index].slot = .silent
        }
    }

    func cancel(key: String) -> Bool {
        let cancelled = state.withLock { state in
            guard let index = state.indexByKey.removeValue(forKey: key) else { return false }
            let (_, slot, handle) = state.vacate(Int(index), keyRemoved: true)
            retire(slot, handle, in: &state)
            return true
        }
        if cancelled { storeChanged() }
        return cancelled
    }

    func pause(key: String) -> Bool {
        let paused = state.withLock { state in
            guard let index = state.place(of: key), !state.places[index].isPaused else { return false }
            let now = mechanism.now()
            _ = state.rearm(index)
            state.places[index].progress.pause(at: now)
            state.places[index].isPaused = true
            state.places[index].handle = state.places[index].handle.take().flatMap(mechanism.pause)
            state.changes &+= 1
            return true
        }
        if paused { storeChanged() }
        return paused
    }

    func resume(key: String) -> Bool {
        let resumed = state.withLock { state in
            guard let index = state.place(of: key), state.places[index].isPaused else { return false }
            let now = mechanism.now()
            let id = state.rearm(index)
            state.places[index].progress.resume(at: now)
            state.places[index].isPaused = false
            let handle = state.places[index].handle.take()
            state.places[index].handle = mechanism.resume(
                handle, id: id, key: key, firstFire: state.places[index].progress.nextFire, table: self)
            state.changes &+= 1
            return true
        }
        if resumed { storeChanged() }
        return resumed
    }

    func remaining(key: String) -> Duration? {
        state.withLock { state in
            state.place(of: key).map { state.places[$0].progress.remaining(at: mechanism.now()) }
        }
    }

    /// The slot observing the countdown under `key`: what the table still holds of an
    /// observer (``ObserverSlot/silent`` when nobody observes it). For tests.
    func observerSlot(key: String) -> ObserverSlot? {
        state.withLock { state in state.place(of: key).flatMap { state.places[$0].slot } }
    }

    var activeKeys: [String] {
        state.withLock { $0.indexByKey.keys }
    }

    var activeCount: Int {
        state.withLock { $0.indexByKey.count }
    }

    // MARK: - The app's lifecycle

    /// Marks, in every running countdown that counts ticks, the time the app went to the
    /// background (nothing to do for a progress that reads a clock), then waits until the
    /// store, if one is attached, holds every change: the process may be frozen and killed
    /// from here on.
    func enteredBackground() {
        defer { waitUntilStored() }
        guard Mechanism.Progress.countsTicks else { return }
        state.withLock { state in
            guard !state.isInBackground, !state.isShutDown else { return }
            state.isInBackground = true
            let now = mechanism.now(), boot = SystemClocks.continuous()
            for index in state.places.indices where state.places[index].isOccupied && !state.places[index].isPaused {
                state.places[index].progress.enteredBackground(at: now, boot: boot)
            }
        }
    }

    /// Takes off, in every countdown marked at the background, the time its ticks did not
    /// count; tells its observer the corrected remaining time (or the finish), and moves its
    /// timer onto the corrected grid.
    func enteredForeground() {
        guard Mechanism.Progress.countsTicks else { return }
        let drain = state.withLock { state -> Bool in
            guard state.isInBackground else { return false }
            state.isInBackground = false
            let now = mechanism.now(), boot = SystemClocks.continuous()
            for index in state.places.indices where state.places[index].isOccupied {
                guard let step = state.places[index].progress.enteredForeground(at: now, boot: boot) else { continue }
                switch step {
                case .finished:
                    finish(index, in: &state)
                case .tick(let remaining):
                    let key = state.places[index].key
                    state.decided.append(.init(slot: state.places[index].slot!, event: .tick(key, remaining)))
                    let id = state.rearm(index)
                    let kept = state.places[index].handle.take().flatMap(mechanism.pause)
                    state.places[index].handle = mechanism.resume(
                        kept, id: id, key: key, firstFire: state.places[index].progress.nextFire, table: self)
                    state.changes &+= 1
                case .quiet:
                    break
                }
            }
            return flush(&state)
        }
        storeChanged()
        if drain { queueDrain() }
    }

    // MARK: - The store

    /// Restores the countdowns `store` keeps, then writes every change to it. See
    /// ``KeyedCountdownScheduler/restore(from:)``.
    func restore(from store: CountdownStore) throws(CountdownStoreError) -> CountdownRestoration {
        try store.claim()
        let restoration: CountdownRestoration
        do throws(CountdownStoreError) {
            let records = try store.read()
            let writer = StoreWriter(store: store) { [weak self] written in
                self?.storeSnapshot(changedSince: written, clocks: store.clocks)
            } changeCount: { [weak self] in
                self?.state.withLock { $0.isShutDown ? nil : $0.changes }
            }
            restoration = try restore(records, clocks: store.clocks, writer: writer)
        } catch {
            store.release()
            throw error
        }
        // Written before returning: the expired countdowns leave the file at launch.
        waitUntilStored()
        return restoration
    }

    /// Decides every record, refuses them all if one is refused, and restores each with no
    /// observer: running ones on their deadline (by the boot clock within one boot, by the
    /// wall clock after a reboot), paused ones paused.
    private func restore(_ records: [CountdownRecord], clocks: StoreClocks, writer: StoreWriter)
        throws(CountdownStoreError) -> CountdownRestoration
    {
        try state.withLock { state throws(CountdownStoreError) -> CountdownRestoration in
            guard !state.hasStore else { throw .alreadyAttached(path: writer.store.path) }
            if state.isShutDown, let first = records.first { throw .refused(key: first.key, .shutDown) }
            // The store's clocks first, the scheduler's last: the time left is read at the
            // earlier instant and counted from the later one, so a restored deadline is never
            // early (a snapshot reads them the other way round, for the same reason).
            let wall = clocks.wall(), boot = clocks.boot()
            let now = mechanism.now()
            var restoration = CountdownRestoration()
            var chosen: [(key: String, remaining: Duration, isPaused: Bool)] = []
            for record in records {
                if state.place(of: record.key) != nil {
                    restoration.kept.append(record.key)
                    continue
                }
                switch record.state {
                case .paused(let remaining):
                    chosen.append((record.key, .nanoseconds(remaining), true))
                case let .running(wallDeadline, bootDeadline, bootID):
                    let sameBoot = bootID != nil && bootID == clocks.bootID
                    let left = sameBoot ? bootDeadline &- boot : wallDeadline &- wall
                    if left > 0 { chosen.append((record.key, .nanoseconds(left), false)) } else { restoration.expired.append(record.key) }
                }
            }
            for countdown in chosen where countdown.remaining > settings.maximumDuration {
                throw .refused(key: countdown.key, .durationAboveMaximum(countdown.remaining, maximum: settings.maximumDuration))
            }
            if let capacity = settings.capacity, state.indexByKey.count + chosen.count > capacity {
                let first = chosen[max(0, capacity - state.indexByKey.count)].key
                throw .refused(key: first, .capacityExceeded(capacity: capacity))
            }
            for countdown in chosen {
                _ = state.placeOrReserve(countdown.key)
                var progress = mechanism.makeProgress(duration: countdown.remaining, at: now)
                if countdown.isPaused {
                    // Paused with no timer, as `pause` leaves it; `resume` arms one.
                    progress.pause(at: now)
                    let id = state.occupy(key: countdown.key, slot: .silent, progress: progress)
                    state.places[Int(id.index)].isPaused = true
                    restoration.paused[countdown.key] = countdown.remaining
                } else {
                    let id = state.occupy(key: countdown.key, slot: .silent, progress: progress)
                    state.places[Int(id.index)].handle = mechanism.arm(
                        id, key: countdown.key, firstFire: progress.nextFire, table: self)
                    restoration.running[countdown.key] = countdown.remaining
                }
            }
            state.hasStore = true
            state.changes &+= 1  // the file is written at once: the expired records leave it
            self.writer.withLock { $0 = writer }
            hasWriter.store(true, ordering: .releasing)
            return restoration
        }
    }

    /// What the store keeps of every countdown, read at one instant; nil when nothing changed
    /// since `written`, or once shut down (the store keeps what ran before the shutdown).
    private func storeSnapshot(changedSince written: UInt64, clocks: StoreClocks) -> StoreWriter.Snapshot? {
        state.withLock { state in
            guard !state.isShutDown, state.changes != written else { return nil }
            return storeSnapshot(of: state, clocks: clocks)
        }
    }

    /// What the store keeps of every countdown now (lock held). The scheduler's clock first,
    /// the store's last: a deadline is the time left then counted from a later instant, so it
    /// is never early.
    private func storeSnapshot(of state: borrowing State, clocks: StoreClocks) -> StoreWriter.Snapshot {
        let now = mechanism.now()
        let wall = clocks.wall(), boot = clocks.boot()
        var records: [CountdownRecord] = []
        records.reserveCapacity(state.indexByKey.count)
        for index in state.places.indices where state.places[index].isOccupied {
            let left = state.places[index].progress.remaining(at: now).nanoseconds
            // A paused countdown whose deadline had passed is on its way to its finish:
            // kept as a deadline that has passed, so that a restore reports it expired.
            let record: CountdownRecord.State = state.places[index].isPaused && left > 0
                ? .paused(remaining: left)
                : .running(wallDeadline: wall &+ left, bootDeadline: boot &+ left, bootID: clocks.bootID)
            records.append(CountdownRecord(key: state.places[index].key, state: record))
        }
        return StoreWriter.Snapshot(changes: state.changes, records: records)
    }

    /// The store, if one is attached.
    private var storeWriter: StoreWriter? {
        guard hasWriter.load(ordering: .acquiring) else { return nil }
        return writer.withLock { $0 }
    }

    /// A change the store keeps was made: the store's next write carries it. Returns at once.
    private func storeChanged() {
        storeWriter?.changed()
    }

    /// Returns once the store, if one is attached, holds every change made before the call.
    func waitUntilStored() {
        storeWriter?.waitUntilWritten()
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
        let through = state.withLock { $0.changes }
        guard !writer.whenWritten(through, redrain) else { return nil }
        return (first, Outbox.Hold(count: batch.count - first, through: through))
    }

    func shutdown() {
        let writer = storeWriter
        let (first, last) = state.withLock { state -> (Bool, StoreWriter.Snapshot?) in
            guard !state.isShutDown else { return (false, nil) }
            // What runs at this instant is what the store keeps for the next launch.
            let last = writer.map { storeSnapshot(of: state, clocks: $0.store.clocks) }
            state.isShutDown = true
            let disarm = mechanism.disarmsEachOnShutdown
            for index in state.places.indices where state.places[index].isOccupied {
                let (_, slot, handle) = state.vacate(index)
                retire(slot, disarm ? handle : nil, in: &state)
            }
            state.places.removeAll()
            state.freePlaces = []
            state.indexByKey = KeyIndex()
            return (true, last)
        }
        if let last { writer?.writeLast(last) }
        if first { mechanism.shutdown() }
    }

    // MARK: - Called by the mechanisms

    enum FireResult: Equatable {
        /// The fire belongs to a countdown that was paused, cancelled, finished or replaced.
        case stale
        /// Handled; the countdown continues and its next fire is due then.
        case continues(nextFire: MonotonicInstant)
        case finished
    }

    /// A timer fired for `id`. Each call is one fire: a tick-counting progress takes a tick
    /// off, whatever the time, or `intervals` ticks when the timer says it missed some.
    func fire(_ id: CountdownID, intervals: Int = 1) -> FireResult {
        let (result, drain) = state.withLock { state -> (FireResult, Bool) in
            guard let index = state.armed(id), !state.places[index].isPaused else { return (.stale, false) }
            let result = advance(index, at: mechanism.now(), intervals: intervals, in: &state)
            return (result, flush(&state))
        }
        if drain { queueDrain() }
        return result
    }

    /// Many fires at one wake-up of a mechanism that drives every countdown from one place.
    /// `batch` holds the countdowns due, earliest first; on return it holds those that
    /// continue, each with its next fire. The lock is taken once per ``batchChunk`` fires, not
    /// per fire, and not for the whole batch: at a million countdowns a batch is thousands of
    /// fires, and a `start` waiting behind all of them would wait milliseconds. Returns whether
    /// events were decided: the caller, which runs on the delivery queue, then calls
    /// ``deliverDecided()`` instead of waiting for a hop to the queue it is already on.
    func fire(_ batch: inout [DueItem]) -> Bool {
        var decided = false
        var kept = 0
        var next = 0
        while next < batch.count {
            let chunk = next..<min(next + Self.batchChunk, batch.count)
            next = chunk.upperBound
            let flushed = state.withLock { state -> Bool in
                let now = mechanism.now()
                for position in chunk {
                    let item = batch[position]
                    let id = CountdownID(index: item.index, serial: 0, arm: item.arm)
                    guard let index = state.armed(id), !state.places[index].isPaused else { continue }
                    if case .continues(let due) = advance(index, at: now, intervals: 1, in: &state) {
                        batch[kept] = DueItem(due: due, index: item.index, arm: item.arm)
                        kept += 1
                    }
                }
                return flush(&state)
            }
            decided = decided || flushed
        }
        batch.removeLast(batch.count - kept)
        return decided
    }

    /// How many fires of one batch are decided under one acquisition of the lock.
    private static var batchChunk: Int { 256 }

    enum WorkerStep: Equatable {
        case sleep(until: MonotonicInstant)
        case waitForResume
        case exit
    }

    /// For a worker that sleeps between fires (the operation-queue backend): fires if the
    /// next fire is due, and says what to do next. Spurious wake-ups are harmless. The worker
    /// lives as long as its countdown, across pauses, so it is recognised by `serial`.
    func workerStep(_ id: CountdownID) -> WorkerStep {
        let (step, drain) = state.withLock { state -> (WorkerStep, Bool) in
            let now = mechanism.now()
            let index = Int(id.index)
            guard index < state.places.count, state.places[index].serial == id.serial,
                state.places[index].isOccupied
            else { return (.exit, false) }
            if state.places[index].isPaused { return (.waitForResume, false) }
            let nextFire = state.places[index].progress.nextFire
            guard now.monotonic >= nextFire else { return (.sleep(until: nextFire), false) }
            switch advance(index, at: now, intervals: 1, in: &state) {
            case .continues(let next): return (.sleep(until: next), flush(&state))
            case .finished, .stale: return (.exit, flush(&state))
            }
        }
        if drain { queueDrain() }
        return step
    }

    // MARK: - Internals (lock held)

    /// Replaces the observer of the countdown at `index` with `slot`'s, and tells it the
    /// remaining time at once. Returns that time.
    private func attach(at index: Int, slot: ObserverSlot, at now: Moment, in state: inout State) -> Duration {
        let key = state.places[index].key
        state.revoke(state.places[index].slot!)
        state.places[index].slot = slot
        let remaining = state.places[index].progress.remaining(at: now)
        state.places[index].progress.told(remaining)
        // A countdown whose deadline passed is finishing: the new observer hears the finish,
        // never a tick of zero.
        if remaining > .zero { state.decided.append(.init(slot: slot, event: .tick(key, remaining))) }
        return remaining
    }

    private func advance(_ index: Int, at now: Moment, intervals: Int, in state: inout State) -> FireResult {
        switch state.places[index].progress.advance(at: now, intervals: intervals) {
        case .finished:
            finish(index, in: &state)
            return .finished
        case .tick(let remaining):
            state.decided.append(.init(slot: state.places[index].slot!, event: .tick(state.places[index].key, remaining)))
            let nextFire = state.places[index].progress.nextFire
            if state.places[index].progress.nextIntervalIsShort, let handle = state.places[index].handle {
                mechanism.shorten(handle, nextFire: nextFire)
            }
            return .continues(nextFire: nextFire)
        case .quiet:
            return .continues(nextFire: state.places[index].progress.nextFire)
        }
    }

    /// The countdown at `index` finished: its place is freed before its observer hears it.
    private func finish(_ index: Int, in state: inout State) {
        let (key, slot, handle) = state.vacate(index)
        if let handle { mechanism.disarm(handle) }
        state.finished(slot)
        state.decided.append(.init(slot: slot, event: .finished(key)))
    }

    /// Hands what this locked section decided to the outbox, in order; returns whether a drain
    /// must be queued once the lock is released.
    private func flush(_ state: inout State) -> Bool {
        guard !state.decided.isEmpty else { return false }
        let queue = outbox.withLock { $0.absorb(&state.decided) }
        outboxFilled.store(true, ordering: .releasing)
        return queue
    }

    /// A countdown that ends without a finish: its observer hears nothing more.
    private func retire(_ slot: ObserverSlot, _ handle: Mechanism.Handle?, in state: inout State) {
        state.revoke(slot)
        if let handle { mechanism.disarm(handle) }
    }

    // MARK: - Delivery (on the delivery queue)

    private func queueDrain() {
        settings.deliveryQueue.async { [self] in drain(lingering: mechanism.deliveryMayLinger) }
    }

    /// Delivers every event decided so far with a hop to the delivery queue.
    func deliverDecidedLater() { queueDrain() }

    /// Delivers every event decided so far, at once; only on the delivery queue.
    func deliverDecided() {
        dispatchPrecondition(condition: .onQueue(settings.deliveryQueue))
        drain(lingering: false)
    }

    /// How long a drain in a dense stream of events looks again before it ends: waking the
    /// delivery queue's thread costs more than this at the rates where a drain is queued again
    /// within this long after the last one ended (above 100 000 events a second).
    private static var linger: UInt64 { 10_000 }

    /// Delivers everything decided so far, in order, and what is decided while it runs, until
    /// nothing is left. A slot revoked meanwhile (cancel, attach, shutdown) stays silent.
    ///
    /// `lingering`: when this drain was queued within ``linger`` of the last one's end, it
    /// looks again for that long before it ends, so that a dense stream of events (a million
    /// starts in a second) costs no thread wake-up per event. Only for a mechanism that says
    /// ``CountdownMechanism/deliveryMayLinger``.
    private func drain(lingering: Bool) {
        let began = SystemClocks.monotonic()
        outboxFilled.store(false, ordering: .relaxed)
        var (batch, previousHold, dense) = outbox.withLock { outbox in
            (outbox.take(staying: lingering), outbox.takeHold(), began &- outbox.lastDrainEnd < Self.linger)
        }
        while true {
            if !batch.isEmpty {
                // A finish is heard only once the store no longer holds its countdown: it
                // waits, with what came after it, for the write, and the queue is free meanwhile.
                if let (index, hold) = unwrittenFinish(in: batch, after: previousHold) {
                    for delivery in batch[..<index] { delivery.slot.deliver(delivery.event) }
                    outbox.withLock { $0.hold(batch[index...], count: hold.count, through: hold.through) }
                    return
                }
                previousHold = nil
                for delivery in batch { delivery.slot.deliver(delivery.event) }
            } else if lingering && dense {
                // Watches the flag, not the lock, until something comes or the time is up.
                let idleSince = SystemClocks.monotonic()
                while !outboxFilled.load(ordering: .acquiring) {
                    if SystemClocks.monotonic() &- idleSince >= Self.linger {
                        dense = false
                        break
                    }
                }
            } else {
                outbox.withLock { $0.lastDrainEnd = SystemClocks.monotonic() }
                return
            }
            outboxFilled.store(false, ordering: .relaxed)
            let staying = lingering && dense
            batch = outbox.withLock { $0.take(returning: batch, staying: staying) }
        }
    }
}
