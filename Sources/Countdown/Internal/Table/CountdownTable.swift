/// The keyed bookkeeping every backend shares, as a value: key → countdown, the slab, every
/// transition of the contract, the app's lifecycle and the store's change count.
///
/// Every operation takes the instant it happens at and returns a ``Decision``: its answer, and
/// the ``Actions`` the engine carries out once it has let go of the table's lock (hand events to
/// the outbox, arm or disarm a timer, revoke an observer, end a stream, ask for a store
/// write). Nothing here locks, reads a clock, touches a timer or calls an observer, so the
/// contract's transitions are tested with made-up instants, and a mechanism's hooks, run by
/// the engine, may call back into the scheduler.
///
/// Countdowns live in a slab: a countdown is a place (an integer) in a chunked array, found
/// from its key through a sharded ``KeyIndex``, and timers name it by place, never by key, so a
/// fire costs no hashing. Freed places are reused; a place's `serial` and `arm` outlive its
/// occupants, so a timer of an earlier occupant, or one armed for a pause since undone, is
/// recognised as stale.
///
/// The events a decision holds carry a ticket, numbered in the order the decisions were made
/// under the lock; the engine hands them to the ``Outbox`` after releasing it, and the outbox
/// takes them in ticket order. So the order of the decisions, whichever thread made them, is
/// the order observers hear them in (remaining never goes up, nothing follows a finish).
struct CountdownTable<Progress: CountdownProgress, Handle> {
    /// What the table is told once, at the start.
    struct Rules {
        let tick: Duration
        let maximumDuration: Duration
        let capacity: Int?
        /// What the mechanism is: whether the engine hands back what an arm made
        /// (``CountdownTable/keep(_:for:)``), whether a handle stays across pauses (a worker),
        /// whether arms go to the outbox with the events (``Actions/arms``, a shared due-queue).
        var arming: ArmingStyle = .timerPerCountdown(shutdown: .disarmEach)
    }

    let rules: Rules
    /// The rules' tick, converted once for every progress the table makes.
    let tick: TickLength
    let layout = PlaceLayout()
    var indexByKey = KeyIndex()
    var places = ChunkedArray<Place>()
    var freePlaces: [UInt32] = []
    /// How to end the event stream each attached stream's slot feeds. Kept here, not in every
    /// slot: a slot is read on every delivery, and a million of them stay smaller.
    var streamEnds: [ObjectIdentifier: @Sendable () -> Void] = [:]
    /// The ticket of the next decision that decides events.
    var nextTicket: UInt64 = 0
    var isShutDown = false
    /// Counts the changes a store keeps: a countdown started, restored, ended, paused,
    /// resumed, or corrected at the foreground. Bumped by ``recordChange(_:)`` alone.
    var changes: UInt64 = 0
    /// Whether a store was attached (``restore(_:now:wall:boot:bootID:storePath:)``).
    var hasStore = false
    /// Between ``enteredBackground(now:boot:)`` and the foreground.
    var isInBackground = false

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

    /// The same, deciding into the caller's `actions` (empty): the engine's start, the call
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

    /// The same, deciding into the caller's `actions` (empty), as a start does: the engine's
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
    mutating func setPaused(_ paused: Bool, key: String, now: Moment) -> Decision<Bool> {
        var decision = Decision(answer: false)
        guard let index = place(of: key), places[index].state.isPaused != paused else { return decision }
        places[index].arm &+= 1
        places[index].state = paused ? .paused : .running
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
        for index in places.indices where places[index].state.isOccupied { keys.append(places[index].key) }
        return keys
    }
    var activeCount: Int { indexByKey.count }
}
