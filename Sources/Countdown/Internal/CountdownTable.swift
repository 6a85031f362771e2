import CountdownPrefetch

/// The keyed bookkeeping every backend shares, as a value: key → countdown, the slab, every
/// transition of the contract, the app's lifecycle and the store's change count.
///
/// Every operation takes the instant it happens at and returns a ``Decision``: its answer, and
/// the ``Actions`` the driver carries out once it has let go of the table's lock (hand events to
/// the outbox, arm or disarm a timer, revoke an observer, end a stream, ask for a store
/// write). Nothing here locks, reads a clock, touches a timer or calls an observer, so the
/// contract's transitions are tested with made-up instants, and a mechanism's hooks, run by
/// the driver, may call back into the scheduler.
///
/// Countdowns live in a slab: a countdown is a place (an integer) in a chunked array, found
/// from its key through a sharded ``KeyIndex``, and timers name it by place, never by key, so a
/// fire costs no hashing. Freed places are reused; a place's `serial` and `arm` outlive its
/// occupants, so a timer of an earlier occupant, or one armed for a pause since undone, is
/// recognised as stale.
///
/// The events a decision holds carry a ticket, numbered in the order the decisions were made
/// under the lock; the driver hands them to the ``Outbox`` after releasing it, and the outbox
/// takes them in ticket order. So the order of the decisions, whichever thread made them, is
/// the order observers hear them in (remaining never goes up, nothing follows a finish).
struct CountdownTable<Progress: CountdownProgress, Handle> {
    /// What the table is told once, at the start.
    struct Rules {
        let tick: Duration
        let maximumDuration: Duration
        let capacity: Int?
        /// The driver hands back what an arm made (``CountdownTable/keep(_:for:)``); false for
        /// a mechanism whose timers find the table by place alone (one ticker for all).
        var keepsHandles = true
        /// A countdown's handle stays across pauses and is woken instead of disarmed and
        /// armed again (a worker that sleeps between ticks).
        var keepsHandleWhilePaused = false
        /// A shutdown disarms every countdown; false when the mechanism's own shutdown takes
        /// every timer down at once.
        var disarmsEachOnShutdown = true
        /// Arms go to the outbox with the events, as ``Actions/arms``, not as effects: the
        /// drain files them (``CountdownMechanism/filesArmsOnDeliveryQueue``). Only for a
        /// mechanism that keeps no handles.
        var filesArmsWithEvents = false
    }

    /// What the driver does, in order, after releasing the lock.
    enum Effect {
        case arm(CountdownID, key: String, firstFire: MonotonicInstant)
        case disarm(Handle)
        /// A handle kept while paused: look at the table again (paused, resumed, gone).
        case wake(Handle)
        case shorten(Handle, nextFire: MonotonicInstant)
        /// The observer hears nothing more, from before the operation returns.
        case revoke(ObserverSlot)
        /// The observer hears nothing decided before its countdown's pause `below` (a tick
        /// already queued when the countdown was paused).
        case silence(ObserverSlot, below: UInt32)
        case endStream(@Sendable () -> Void)
        /// Every countdown was retired at a shutdown: end the mechanism's threads.
        case shutDownMechanism
        /// The slab is growing: make room for more places (``makeRoom()``) off the caller's
        /// path, and hand it over (``provide(_:)``).
        case makeRoom
    }

    /// An operation's answer and what is left to do.
    struct Decision<Answer> {
        var answer: Answer
        var actions = Actions()

        // Read-only views of the actions, for whoever inspects a decision (the tests).
        var effects: SmallList<Effect> { actions.effects }
        var events: SmallList<Outbox.Delivery> { actions.events }
        var ticket: UInt64 { actions.ticket }
        var persist: Bool { actions.persist }
        var retired: ObserverSlot? { actions.retired?.takeUnretainedValue() }
    }

    /// What an operation left the driver to do. Not generic over the answer, so that the
    /// driver carries it out in one specialized function.
    struct Actions {
        var effects = SmallList<Effect>()
        /// The events decided, in order, for the outbox.
        var events = SmallList<Outbox.Delivery>()
        /// Where `events` go in the order of every decision's events: the outbox takes them
        /// in ticket order, whichever thread hands them over first.
        var ticket: UInt64 = 0
        /// A change the store keeps was made: ask for a write.
        var persist = false
        /// An observer let go with nothing of it left to deliver: it is not revoked (a cache
        /// miss at a million countdowns), and a drain already queued drops it, so that the
        /// caller does not release it either (another); with none queued, the caller does. The
        /// table's reference, held unmanaged: a decision may be copied on its way, and a copy
        /// of a managed one retains it. The driver takes it over.
        var retired: Unmanaged<ObserverSlot>?
        /// First fires for the drain to file, under ``Rules/filesArmsWithEvents``.
        var arms = SmallList<Outbox.Arm>()
    }

    enum FireResult: Equatable {
        /// The fire belongs to a countdown that was paused, cancelled, finished or replaced.
        case stale
        /// Handled; the countdown continues and its next fire is due then.
        case continues(nextFire: MonotonicInstant)
        case finished
    }

    enum WorkerStep: Equatable {
        case sleep(until: MonotonicInstant)
        case waitForResume
        case exit
    }

    /// A place in the slab: everything a countdown keeps, side by side, so that reaching a
    /// countdown at random (a start, a cancel, a fire) costs one or two cache lines. Fields of
    /// an empty place keep harmless values; `serial` and `arm` outlive its occupants.
    struct Place {
        var serial: UInt32 = 0
        var arm: UInt32 = 0
        /// The arm an `.arm` effect was decided for whose handle has not been kept yet.
        var pendingArm: UInt32 = 0
        var isPending = false
        var isOccupied = false
        var isPaused = false
        var key = ""
        /// The key's hash, so that a finish leaves the index without hashing the key again.
        var keyHash = KeyIndex.Hash(value: 0)
        var slot: ObserverSlot?
        var progress: Progress
        var handle: Handle?
        /// Counts the pauses of the countdowns this place held: events decided before a pause
        /// carry a lower one, and the slot drops them (nothing of a paused countdown is heard,
        /// not even what was already queued).
        var generation: UInt32 = 0
        /// The ticket of the last decision that gave an event to this place's observer: once
        /// every ticket up to it is delivered, nothing of the observer is left in the queue.
        var lastTicket: UInt64 = 0
    }

    let rules: Rules
    /// The rules' tick, converted once for every progress the table makes.
    private let tick: TickLength
    private let layout = PlaceLayout()
    private var indexByKey = KeyIndex()
    private var places = ChunkedArray<Place>()
    private var freePlaces: [UInt32] = []
    /// How to end the event stream each attached stream's slot feeds. Kept here, not in every
    /// slot: a slot is read on every delivery, and a million of them stay smaller.
    private var streamEnds: [ObjectIdentifier: @Sendable () -> Void] = [:]
    /// The ticket of the next decision that decides events.
    private var nextTicket: UInt64 = 0
    private(set) var isShutDown = false
    /// Counts the changes a store keeps: a countdown started, restored, ended, paused,
    /// resumed, or corrected at the foreground. Bumped by ``recordChange(_:)`` alone.
    private(set) var changes: UInt64 = 0
    /// Whether a store was attached (``restore(_:now:wall:boot:bootID:storePath:)``).
    private(set) var hasStore = false
    /// Between ``enteredBackground(now:boot:)`` and the foreground.
    private(set) var isInBackground = false

    init(rules: Rules) {
        self.rules = rules
        tick = TickLength(rules.tick)
    }

    // MARK: - The scheduler's API

    mutating func start(key: String, duration: Duration, observer slot: ObserverSlot, now: Moment)
        throws(CountdownError) -> Decision<CountdownStart>
    {
        try start(key: key, hash: indexByKey.hash(key), duration: duration, observer: slot, now: now)
    }

    /// What hashes every key, the same for the table's whole life: a caller may hash a key
    /// before it takes the table's lock.
    var keyHasher: KeyHash { indexByKey.hasher }

    /// Hints that `hash`'s key is looked up soon: the line its probe begins at is fetched while
    /// the caller does something else (reads the clocks). At a million keys the index is
    /// megabytes, and that line a miss of 130–180 ns on this kind of machine.
    ///
    /// Mutating, though it changes nothing: called on the lock's `inout` table from a closure
    /// that also captures the caller's actions, a non-mutating call was made on a copy of the
    /// whole table (about 400 instructions a start in callgrind's profile: a retain and a release
    /// of everything it holds).
    mutating func prefetch(_ hash: KeyIndex.Hash) { indexByKey.prefetchHome(hash) }

    /// `hash`: `key` hashed by `keyHasher`.
    mutating func start(key: String, hash: KeyIndex.Hash, duration: Duration, observer slot: ObserverSlot, now: Moment)
        throws(CountdownError) -> Decision<CountdownStart>
    {
        var decision = Decision(answer: CountdownStart.started)
        decision.answer = try start(key: key, hash: hash, duration: duration, observer: slot, now: now, &decision.actions)
        return decision
    }

    /// The same, deciding into the caller's `actions` (empty): the driver's start, the call
    /// made a million times in a row. A decision returned through the lock's closure was copied
    /// twice on its way (two `memcpy`s a start in callgrind's profile).
    mutating func start(
        key: String, hash: KeyIndex.Hash, duration: Duration, observer slot: ObserverSlot, now: Moment,
        _ actions: inout Actions
    ) throws(CountdownError) -> CountdownStart {
        guard !key.isEmpty else { throw .emptyKey }
        guard duration > .zero else { throw .nonPositiveDuration(duration) }
        guard duration <= rules.maximumDuration else {
            throw .durationAboveMaximum(duration, maximum: rules.maximumDuration)
        }
        guard !isShutDown else { throw .shutDown }
        let probe = probe(key, hash)
        if let index = probe.place {
            return .attached(remaining: attach(at: Int(index), slot: slot, now: now, &actions))
        }
        if let capacity = rules.capacity, indexByKey.count >= capacity { throw .capacityExceeded(capacity: capacity) }
        let progress = Progress(duration: duration, tick: tick, at: now)
        let id = occupy(key: key, probe, slot: slot, progress: progress, &actions)
        arm(id, key: key, firstFire: progress.nextFire, &actions)
        emit(slot, .tick(key, duration), told: true, at: Int(id.index), &actions)
        return .started
    }

    /// `ended`: how to end the stream `slot` feeds, once it is revoked.
    mutating func attach(key: String, observer slot: ObserverSlot, ended: (@Sendable () -> Void)? = nil, now: Moment)
        -> Decision<Duration?>
    {
        var decision = Decision<Duration?>(answer: nil)
        guard let index = place(of: key) else { return decision }
        if let ended { streamEnds[ObjectIdentifier(slot)] = ended }
        decision.answer = attach(at: index, slot: slot, now: now, &decision.actions)
        return decision
    }

    /// Takes `slot`'s observer off the countdown under `key`, if it still observes it; the
    /// countdown runs on, observed by no one.
    mutating func detach(key: String, observer slot: ObserverSlot) -> Decision<Void> {
        var decision = Decision(answer: ())
        guard let index = place(of: key), places[index].slot === slot else { return decision }
        revoke(slot, &decision.actions)
        places[index].slot = .silent
        return decision
    }

    /// `deliveredBelow`: every event of a lower ticket has been delivered (or dropped), as the
    /// delivery queue last said; an observer with nothing left to deliver is retired, not
    /// revoked. Zero, knowing nothing delivered, always revokes.
    mutating func cancel(key: String, deliveredBelow: UInt64 = 0) -> Decision<Bool> {
        cancel(key: key, hash: indexByKey.hash(key), deliveredBelow: deliveredBelow)
    }

    /// `hash`: `key` hashed by `keyHasher`.
    mutating func cancel(key: String, hash: KeyIndex.Hash, deliveredBelow: UInt64 = 0) -> Decision<Bool> {
        var decision = Decision(answer: false)
        decision.answer = cancel(key: key, hash: hash, deliveredBelow: deliveredBelow, &decision.actions)
        return decision
    }

    /// The same, deciding into the caller's `actions` (empty), as a start does: the driver's
    /// calls made at a million keys in a row.
    mutating func cancel(key: String, hash: KeyIndex.Hash, deliveredBelow: UInt64, _ actions: inout Actions) -> Bool {
        let probe = probe(key, hash)
        guard let index = probe.place else { return false }
        indexByKey.remove(probe)
        let idle = places[Int(index)].lastTicket < deliveredBelow
        let (_, slot, handle) = vacate(Int(index), keyRemoved: true, &actions)
        // A stream's slot is revoked all the same: its end is an effect.
        if idle && (streamEnds.isEmpty || streamEnds[ObjectIdentifier(slot)] == nil) {
            actions.retired = Unmanaged.passRetained(consume slot)
        } else {
            revoke(slot, &actions)
        }
        if let handle { actions.effects.append(.disarm(handle)) }
        return true
    }

    mutating func pause(key: String, now: Moment) -> Decision<Bool> {
        setPaused(true, key: key, now: now)
    }

    mutating func resume(key: String, now: Moment) -> Decision<Bool> {
        setPaused(false, key: key, now: now)
    }

    /// Pauses or resumes the countdown under `key`; false when there is none, or it is so already.
    private mutating func setPaused(_ paused: Bool, key: String, now: Moment) -> Decision<Bool> {
        var decision = Decision(answer: false)
        guard let index = place(of: key), places[index].isPaused != paused else { return decision }
        places[index].arm &+= 1
        places[index].isPaused = paused
        if paused {
            places[index].progress.pause(at: now)
            if places[index].generation < Outbox.Delivery.answer - 1 { places[index].generation += 1 }
            decision.actions.effects.append(.silence(places[index].slot!, below: places[index].generation))
            stopTimer(index, &decision.actions)
        } else {
            places[index].progress.resume(at: now)
            restartTimer(index, &decision.actions)
        }
        recordChange(&decision.actions)
        decision.answer = true
        return decision
    }

    func remaining(key: String, now: Moment) -> Duration? {
        place(of: key).map { places[$0].progress.remaining(at: now) }
    }

    /// The slot observing the countdown under `key` (``ObserverSlot/silent`` when nobody does).
    func observer(of key: String) -> ObserverSlot? {
        place(of: key).flatMap { places[$0].slot }
    }

    var activeKeys: [String] {
        var keys: [String] = []
        keys.reserveCapacity(indexByKey.count)
        for index in places.indices where places[index].isOccupied { keys.append(places[index].key) }
        return keys
    }
    var activeCount: Int { indexByKey.count }

    // MARK: - The app's lifecycle

    /// Marks, in every running countdown that counts ticks, the time the app went to the
    /// background (`boot`: nanoseconds of the boot clock, which counts through a freeze).
    mutating func enteredBackground(now: Moment, boot: Int64) -> Decision<Void> {
        let decision = Decision(answer: ())
        guard Progress.countsTicks, !isInBackground, !isShutDown else { return decision }
        isInBackground = true
        for index in places.indices where places[index].isOccupied && !places[index].isPaused {
            places[index].progress.enteredBackground(at: now, boot: boot)
        }
        return decision
    }

    /// Takes off, in every countdown marked at the background, the time its ticks did not
    /// count; tells its observer the corrected remaining time (or the finish), and moves its
    /// timer onto the corrected grid.
    mutating func enteredForeground(now: Moment, boot: Int64) -> Decision<Void> {
        var decision = Decision(answer: ())
        guard Progress.countsTicks, isInBackground else { return decision }
        isInBackground = false
        for index in places.indices where places[index].isOccupied {
            guard let step = places[index].progress.enteredForeground(at: now, boot: boot) else { continue }
            switch step {
            case .finished:
                finishCountdown(index, &decision.actions)
            case .tick(let remaining):
                emit(places[index].slot!, .tick(places[index].key, remaining), at: index, &decision.actions)
                places[index].arm &+= 1
                retime(index, &decision.actions)
                recordChange(&decision.actions)
            case .quiet:
                break
            }
        }
        return decision
    }

    // MARK: - The store

    /// Restores `records` with no observer: running ones on their deadline (by the boot clock
    /// within one boot, by the wall clock after a reboot), paused ones paused; refuses them all
    /// if one is refused. `wall`, `boot`: the store's clocks, read before `now`, so that a
    /// restored deadline is never early.
    mutating func restore(_ records: [CountdownRecord], now: Moment, wall: Int64, boot: Int64, bootID: String?, storePath: String)
        throws(CountdownStoreError) -> Decision<CountdownRestoration>
    {
        guard !hasStore else { throw .alreadyAttached(path: storePath) }
        if isShutDown, let first = records.first { throw .refused(key: first.key, .shutDown) }
        var restoration = CountdownRestoration()
        var chosen: [(key: String, remaining: Duration, isPaused: Bool)] = []
        for record in records {
            if place(of: record.key) != nil {
                restoration.kept.append(record.key)
                continue
            }
            switch record.state {
            case .paused(let remaining):
                chosen.append((record.key, .nanoseconds(remaining), true))
            case let .running(wallDeadline, bootDeadline, recordedBoot):
                let sameBoot = recordedBoot != nil && recordedBoot == bootID
                let left = sameBoot ? bootDeadline &- boot : wallDeadline &- wall
                if left > 0 { chosen.append((record.key, .nanoseconds(left), false)) } else { restoration.expired.append(record.key) }
            }
        }
        for countdown in chosen where countdown.remaining > rules.maximumDuration {
            throw .refused(key: countdown.key, .durationAboveMaximum(countdown.remaining, maximum: rules.maximumDuration))
        }
        if let capacity = rules.capacity, indexByKey.count + chosen.count > capacity {
            let first = chosen[max(0, capacity - indexByKey.count)].key
            throw .refused(key: first, .capacityExceeded(capacity: capacity))
        }
        var decision = Decision(answer: restoration)
        for countdown in chosen {
            let probe = probe(countdown.key)
            guard probe.place == nil else { continue }  // the same key twice in the file: the first
            var progress = Progress(duration: countdown.remaining, tick: tick, at: now)
            if countdown.isPaused {
                // Paused with no timer, as `pause` leaves it; `resume` arms one.
                progress.pause(at: now)
                let id = occupy(key: countdown.key, probe, slot: .silent, progress: progress, &decision.actions)
                places[Int(id.index)].isPaused = true
                decision.answer.paused[countdown.key] = countdown.remaining
            } else {
                let id = occupy(key: countdown.key, probe, slot: .silent, progress: progress, &decision.actions)
                arm(Int(id.index), &decision.actions)
                decision.answer.running[countdown.key] = countdown.remaining
            }
        }
        hasStore = true
        recordChange(&decision.actions)  // the file is written at once: the expired records leave it
        return decision
    }

    /// What the store keeps of every countdown; nil when nothing changed since `written` (nil:
    /// whatever the count), or once shut down (the store keeps what ran before the shutdown).
    /// `now` is read before the store's clocks `wall` and `boot`: a deadline is the time left
    /// then, counted from a later instant, so it is never early.
    func snapshot(changedSince written: UInt64?, now: Moment, wall: Int64, boot: Int64, bootID: String?) -> StoreWriter.Snapshot? {
        guard !isShutDown, changes != written else { return nil }
        var records: [CountdownRecord] = []
        records.reserveCapacity(indexByKey.count)
        for index in places.indices where places[index].isOccupied {
            let left = places[index].progress.remaining(at: now).nanoseconds
            // A paused countdown whose deadline had passed is on its way to its finish: kept
            // as a deadline that has passed, so that a restore reports it expired.
            let state: CountdownRecord.State = places[index].isPaused && left > 0
                ? .paused(remaining: left)
                : .running(wallDeadline: wall &+ left, bootDeadline: boot &+ left, bootID: bootID)
            records.append(CountdownRecord(key: places[index].key, state: state))
        }
        return StoreWriter.Snapshot(changes: changes, records: records)
    }

    /// Retires every countdown with no finish; the answer is the first call's (later ones do
    /// nothing and answer false).
    mutating func shutdown() -> Decision<Bool> {
        var decision = Decision(answer: false)
        guard !isShutDown else { return decision }
        isShutDown = true
        for index in places.indices where places[index].isOccupied {
            // The whole index goes below: no key leaves it one by one (a cache miss each).
            let (_, slot, handle) = vacate(index, keyRemoved: true, &decision.actions)
            retire(slot, rules.disarmsEachOnShutdown ? handle : nil, &decision.actions)
        }
        places.removeAll()
        freePlaces = []
        indexByKey = KeyIndex(hasher: indexByKey.hasher)
        decision.actions.effects.append(.shutDownMechanism)
        decision.answer = true
        return decision
    }

    // MARK: - Told by the mechanisms

    /// What an `.arm` effect made for `id`: kept if the countdown is still armed so, else
    /// disarmed (it lost a race with a pause, a cancel or a finish).
    mutating func keep(_ handle: Handle, for id: CountdownID) -> Decision<Void> {
        var decision = Decision(answer: ())
        let index = Int(id.index)
        guard index < places.count, places[index].isOccupied, places[index].serial == id.serial,
              places[index].isPending, places[index].pendingArm == id.arm
        else {
            decision.actions.effects.append(.disarm(handle))
            return decision
        }
        places[index].isPending = false
        places[index].handle = handle
        // A fire on the way may have left a last interval shorter than a tick, with no handle
        // to shorten (a countdown shorter than a tick is rescheduled to the same instant).
        if places[index].progress.nextIntervalIsShort {
            decision.actions.effects.append(.shorten(handle, nextFire: places[index].progress.nextFire))
        }
        // A pause or a resume on the worker's way (its arm moved on) found no handle to wake.
        if rules.keepsHandleWhilePaused, places[index].arm != id.arm { decision.actions.effects.append(.wake(handle)) }
        return decision
    }

    /// A timer fired for `id`. A tick-counting progress takes a tick off, whatever the time, or
    /// `intervals` ticks when the timer says it missed some.
    mutating func fire(_ id: CountdownID, now: Moment, intervals: Int = 1) -> Decision<FireResult> {
        var decision = Decision(answer: FireResult.stale)
        guard let index = armed(id), !places[index].isPaused else { return decision }
        decision.answer = advance(index, now: now, intervals: intervals, &decision.actions)
        return decision
    }

    /// The fires of `batch[chunk]`, due countdowns of a mechanism that drives every countdown
    /// from one place; those that continue are moved to `batch[kept...]`, each with its next
    /// fire, and `kept` counts them.
    mutating func fire(_ batch: inout [DueItem], _ chunk: Range<Int>, kept: inout Int, now: Moment) -> Decision<Void> {
        var decision = Decision(answer: ())
        decision.actions.events.reserveCapacity(chunk.count)
        for position in chunk {
            prefetch(ahead: batch, of: position)
            let item = batch[position]
            guard let index = armed(CountdownID(index: item.index, serial: 0, arm: item.arm)), !places[index].isPaused
            else { continue }
            if case .continues(let due) = advance(index, now: now, intervals: 1, &decision.actions) {
                batch[kept] = DueItem(due: due, index: item.index, arm: item.arm)
                kept += 1
            }
        }
        return decision
    }

    /// For a worker that sleeps between fires: fires if the next fire is due, and says what to
    /// do next. The worker lives as long as its countdown, across pauses, so it is recognised
    /// by `serial`.
    mutating func workerStep(_ id: CountdownID, now: Moment) -> Decision<WorkerStep> {
        var decision = Decision(answer: WorkerStep.exit)
        let index = Int(id.index)
        guard index < places.count, places[index].serial == id.serial, places[index].isOccupied else { return decision }
        if places[index].isPaused {
            decision.answer = .waitForResume
            return decision
        }
        let nextFire = places[index].progress.nextFire
        guard now.monotonic >= nextFire else {
            decision.answer = .sleep(until: nextFire)
            return decision
        }
        switch advance(index, now: now, intervals: 1, &decision.actions) {
        case .continues(let next): decision.answer = .sleep(until: next)
        case .finished, .stale: decision.answer = .exit
        }
        return decision
    }

    // MARK: - Fetching ahead

    /// Where a place keeps what a fire reaches through it, read as raw bits by the prefetch,
    /// which must not retain (an atomic write to a line not yet fetched) what it only hints at.
    private struct PlaceLayout {
        let slot = MemoryLayout<Place>.offset(of: \Place.slot)!
        let key = MemoryLayout<Place>.offset(of: \Place.key)!
        let keyHash = MemoryLayout<Place>.offset(of: \Place.keyHash)!
        let progress = MemoryLayout<Place>.offset(of: \Place.progress)!
    }

    /// How far ahead of the fire at hand a batch's places are fetched, and how far the lines
    /// they lead to: the observer's slot and the key's storage (which the fire's event
    /// retains) and, for a fire that may finish, the key's entry in the index. A batch's
    /// countdowns are at random places among a million: each of those lines is a miss of
    /// about 150 ns here, and taken one after the other they were most of a fire's time.
    private static var placeLead: Int { 16 }
    private static var referenceLead: Int { 8 }

    /// The mask the standard library applies to a large string's object bits for the address
    /// of its storage (64-bit platforms): the key's bytes and reference count are there.
    private static var stringAddressMask: UInt { 0x0FFF_FFFF_FFFF_FFFF }

    /// Hints at the lines the fires `placeLead` and `referenceLead` after `position` touch. A
    /// hint only: a place that changed meanwhile, or a key stored inline (its bits are no
    /// address), costs a useless fetch and nothing else; nothing here is read for a decision.
    private func prefetch(ahead batch: borrowing [DueItem], of position: Int) {
        let far = position &+ Self.placeLead
        if far < batch.count, Int(batch[far].index) < places.count { places.prefetch(Int(batch[far].index)) }
        let near = position &+ Self.referenceLead
        guard near < batch.count, Int(batch[near].index) < places.count else { return }
        places.withElementPointer(at: Int(batch[near].index)) { place in
            let bytes = UnsafeRawPointer(place)
            countdown_prefetch(UnsafeRawPointer(bitPattern: bytes.load(fromByteOffset: layout.slot, as: UInt.self)))
            let keyObject = bytes.load(fromByteOffset: layout.key + MemoryLayout<UInt>.size, as: UInt.self)
            countdown_prefetch(UnsafeRawPointer(bitPattern: keyObject & Self.stringAddressMask))
            let progress = (bytes + layout.progress).assumingMemoryBound(to: Progress.self)
            if progress.pointee.nextFireMayFinish {
                indexByKey.prefetchHome(bytes.load(fromByteOffset: layout.keyHash, as: KeyIndex.Hash.self))
            }
        }
    }

    // MARK: - Transitions

    /// The place of the countdown armed as `id` says, if it is still armed so.
    private func armed(_ id: CountdownID) -> Int? {
        let index = Int(id.index)
        guard index < places.count, places[index].arm == id.arm, places[index].isOccupied else { return nil }
        return index
    }

    private func place(of key: String) -> Int? {
        probe(key).place.map(Int.init)
    }

    /// Hashes `key` once and looks it up; the probe says where it is, or where it would go.
    private func probe(_ key: String) -> KeyIndex.Probe {
        probe(key, indexByKey.hash(key))
    }

    /// Room for the places of a growing slab, made ahead of need (``Effect/makeRoom``): a chunk
    /// of the slab, allocated by the calling thread with no lock held, faulted in off the path
    /// of the starts that fill it.
    typealias Room = ChunkedArray<Place>.Chunk

    static func makeRoom() -> Room { ChunkedArray<Place>.makeChunk() }

    /// Whether room made ahead waits for the places to come.
    var holdsRoomAhead: Bool { places.holdsSpare }

    /// Takes the room a ``Effect/makeRoom`` asked for, and leaves `room` nil; leaves it as it
    /// is when it is no longer wanted (the table was emptied meanwhile), for the caller to let
    /// go of after the lock.
    mutating func provide(_ room: inout Room?) {
        guard let offered = room.take() else { return }
        room = places.provide(offered)
    }

    /// `hash`: `key` hashed by `keyHasher`, before the lock.
    private func probe(_ key: String, _ hash: KeyIndex.Hash) -> KeyIndex.Probe {
        indexByKey.probe(hash) { places[Int($0)].key == key }
    }

    /// Occupies a free place with the countdown under `key`, which `probe` did not find, and
    /// enters it in the index.
    private mutating func occupy(key: String, _ probe: KeyIndex.Probe, slot: ObserverSlot, progress: Progress, _ actions: inout Actions)
        -> CountdownID
    {
        let index: Int
        let id: CountdownID
        // One access to the place, not one per field (each goes through two arrays' checks).
        if let free = freePlaces.popLast() {
            index = Int(free)
            id = Self.occupy(&places[index], at: index, key: key, hash: probe.hash, slot: slot, progress: progress)
        } else {
            index = places.count
            var place = Place(progress: progress)
            id = Self.occupy(&place, at: index, key: key, hash: probe.hash, slot: slot, progress: progress)
            if places.append(consume place) { actions.effects.append(.makeRoom) }
        }
        indexByKey.insert(probe, place: UInt32(index))
        recordChange(&actions)
        return id
    }

    private static func occupy(
        _ place: inout Place, at index: Int, key: String, hash: KeyIndex.Hash, slot: ObserverSlot, progress: Progress
    ) -> CountdownID {
        place.key = key
        place.keyHash = hash
        place.slot = slot
        place.progress = progress
        place.isOccupied = true
        place.isPaused = false
        place.serial &+= 1
        place.arm &+= 1
        return CountdownID(index: UInt32(index), serial: place.serial, arm: place.arm)
    }

    /// Empties the place, and returns what the countdown held; every id that named the place
    /// becomes stale. `keyRemoved`: the caller already took the key out of the index.
    private mutating func vacate(_ index: Int, keyRemoved: Bool = false, _ actions: inout Actions)
        -> (key: String, slot: ObserverSlot, handle: Handle?)
    {
        let (key, keyHash, slot, handle) = Self.vacate(&places[index])
        recordChange(&actions)
        if !keyRemoved { indexByKey.remove(keyHash, place: UInt32(index)) }
        freePlaces.append(UInt32(index))
        return (key, slot, handle)
    }

    /// One access to the place, not one per field.
    private static func vacate(_ place: inout Place)
        -> (key: String, keyHash: KeyIndex.Hash, slot: ObserverSlot, handle: Handle?)
    {
        var key = ""
        swap(&key, &place.key)
        place.isOccupied = false
        place.isPending = false
        place.serial &+= 1
        place.arm &+= 1
        return (key, place.keyHash, place.slot.take()!, place.handle.take())
    }

    /// The one place the store's change count moves.
    private mutating func recordChange(_ actions: inout Actions) {
        changes &+= 1
        actions.persist = true
    }

    private func id(of index: Int) -> CountdownID {
        CountdownID(index: UInt32(index), serial: places[index].serial, arm: places[index].arm)
    }

    /// Decides a timer for the countdown at `index`, at its current arm.
    private mutating func arm(_ index: Int, _ actions: inout Actions) {
        arm(id(of: index), key: places[index].key, firstFire: places[index].progress.nextFire, &actions)
    }

    /// The same, for a caller that holds what the place holds (a start, which just filled it).
    private mutating func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant, _ actions: inout Actions) {
        if rules.filesArmsWithEvents {
            actions.arms.append(Outbox.Arm(id: id, firstFire: firstFire))
            return
        }
        if rules.keepsHandles {
            places[Int(id.index)].isPending = true
            places[Int(id.index)].pendingArm = id.arm
        }
        actions.effects.append(.arm(id, key: key, firstFire: firstFire))
    }

    /// The countdown at `index` was paused (its arm moved on): its timer stops.
    private mutating func stopTimer(_ index: Int, _ actions: inout Actions) {
        if rules.keepsHandleWhilePaused {
            // The worker stays; woken, it finds the countdown paused. One on its way finds it so.
            if let handle = places[index].handle { actions.effects.append(.wake(handle)) }
            return
        }
        // A pending arm is now stale: its handle is disarmed when the driver hands it back.
        places[index].isPending = false
        if let handle = places[index].handle.take() { actions.effects.append(.disarm(handle)) }
    }

    /// The countdown at `index` moved onto another grid (its arm moved on): a kept worker is
    /// woken once, a timer replaced.
    private mutating func retime(_ index: Int, _ actions: inout Actions) {
        if rules.keepsHandleWhilePaused {
            if let handle = places[index].handle { actions.effects.append(.wake(handle)) }
            return
        }
        stopTimer(index, &actions)
        arm(index, &actions)
    }

    /// The countdown at `index` runs again: a timer from its next fire.
    private mutating func restartTimer(_ index: Int, _ actions: inout Actions) {
        if rules.keepsHandleWhilePaused, places[index].handle != nil || places[index].isPending {
            if let handle = places[index].handle { actions.effects.append(.wake(handle)) }
            return
        }
        arm(index, &actions)
    }

    /// Replaces the observer of the countdown at `index` with `slot`'s, and tells it the time
    /// left at once; returns that time.
    private mutating func attach(at index: Int, slot: ObserverSlot, now: Moment, _ actions: inout Actions) -> Duration {
        revoke(places[index].slot!, &actions)
        places[index].slot = slot
        let remaining = places[index].progress.remaining(at: now)
        places[index].progress.told(remaining)
        // A countdown whose deadline passed is finishing: the new observer hears the finish,
        // never a tick of zero.
        if remaining > .zero { emit(slot, .tick(places[index].key, remaining), told: true, at: index, &actions) }
        return remaining
    }

    private mutating func advance(_ index: Int, now: Moment, intervals: Int, _ actions: inout Actions) -> FireResult {
        switch places[index].progress.advance(at: now, intervals: intervals) {
        case .finished:
            finishCountdown(index, &actions)
            return .finished
        case .tick(let remaining):
            emit(places[index].slot!, .tick(places[index].key, remaining), at: index, &actions)
            let nextFire = places[index].progress.nextFire
            // Without a handle yet, `keep` shortens it.
            if places[index].progress.nextIntervalIsShort, let handle = places[index].handle {
                actions.effects.append(.shorten(handle, nextFire: nextFire))
            }
            return .continues(nextFire: nextFire)
        case .quiet:
            return .continues(nextFire: places[index].progress.nextFire)
        }
    }

    /// The countdown at `index` finished: its place is freed before its observer hears it, and
    /// the stream it fed ends with that finish.
    private mutating func finishCountdown(_ index: Int, _ actions: inout Actions) {
        let (key, slot, handle) = vacate(index, &actions)
        if let handle { actions.effects.append(.disarm(handle)) }
        if !streamEnds.isEmpty { streamEnds.removeValue(forKey: ObjectIdentifier(slot)) }
        emit(slot, .finished(key), at: index, &actions)
    }

    /// A countdown that ends without a finish: its observer hears nothing more.
    private mutating func retire(_ slot: ObserverSlot, _ handle: Handle?, _ actions: inout Actions) {
        revoke(slot, &actions)
        if let handle { actions.effects.append(.disarm(handle)) }
    }

    /// Silences `slot`; a stream it fed ends.
    private mutating func revoke(_ slot: ObserverSlot, _ actions: inout Actions) {
        actions.effects.append(.revoke(slot))
        if !streamEnds.isEmpty, let end = streamEnds.removeValue(forKey: ObjectIdentifier(slot)) {
            actions.effects.append(.endStream(end))
        }
    }

    /// Decides an event for `slot`, of the countdown at `index`, stamped with its pause
    /// generation, or, when it answers a call (`told`: the tick a start or an attach tells at
    /// once), with one no pause silences. A decision's first event gives its events their place
    /// in the order of all events (the ticket the outbox takes them by).
    private mutating func emit(_ slot: ObserverSlot, _ event: CountdownEvent, told: Bool = false, at index: Int, _ actions: inout Actions) {
        if actions.events.isEmpty {
            actions.ticket = nextTicket
            nextTicket &+= 1
        }
        let generation = told ? Outbox.Delivery.answer : places[index].generation
        places[index].lastTicket = actions.ticket
        actions.events.append(Outbox.Delivery(slot: slot, event: event, generation: generation))
    }
}

// What a decision carries out of the lock is values and `Sendable` references: a start decides
// into actions its caller holds, across the lock's closure. Room made on another thread is
// handed into the lock the same way (a chunk of places is `Sendable` when a place is).
extension CountdownTable.Effect: Sendable where Handle: Sendable {}
extension CountdownTable.Actions: Sendable where Handle: Sendable {}
extension CountdownTable.Place: Sendable where Progress: Sendable, Handle: Sendable {}
