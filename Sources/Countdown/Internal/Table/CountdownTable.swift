/// The keyed bookkeeping every backend shares, as a value: key → countdown, the slab, every
/// transition of the contract, the app's lifecycle and the store's change count.
///
/// Every operation takes the instant it happens at and returns a ``Decision``: its answer, and
/// the ``Actions`` the engine carries out once it has let go of the table's lock (queue a drain
/// of the delivery pipeline, arm or disarm a timer, let go of an observer, end a stream, ask for a store
/// write). The one thing written for another thread is a place's ``DeliveryGate``, under the
/// lock: a revocation holds from before the call returns. Nothing here locks, reads a clock,
/// touches a timer or calls an observer, so the contract's transitions are tested with made-up
/// instants, and a mechanism's hooks, run by the engine, may call back into the scheduler.
///
/// Countdowns live in a slab: a countdown is a place (an integer) in a chunked array, found
/// from its key through a sharded ``KeyIndex``, and timers name it by place, never by key, so a
/// fire costs no hashing. Freed places are reused; a place's `serial` and `arm` outlive its
/// occupants, so a timer of an earlier occupant, or one armed for a pause since undone, is
/// recognised as stale.
///
/// The events decided are appended to the ``DeliveryPipeline`` the caller hands in (it lives
/// beside the table under the same lock, in ``EngineState``; the table keeps no delivery state
/// of its own), as they are decided, each numbered by its place in the order of all events (its
/// ticket). So the order of the decisions, whichever thread made them, is the order observers
/// hear them in (remaining never goes up, nothing follows a finish), and no decision has events
/// to hand over after the lock: the drain takes them all, a batch at a time.
struct CountdownTable<Progress: CountdownProgress, Handle> {
    /// What the table is told once, at the start.
    struct Rules {
        let tick: Duration
        let maximumDuration: Duration
        let capacity: Int?
        /// What the mechanism is: whether the engine hands back what an arm made
        /// (``CountdownTable/keep(_:for:)``), whether a handle stays across pauses (a worker),
        /// whether first fires go into the pipeline with the events (a shared due-queue).
        var arming: ArmingStyle = .timerPerCountdown(shutdown: .disarmEach)
    }

    let rules: Rules
    /// The rules' tick, converted once for every progress the table makes.
    let tick: TickLength
    let layout = PlaceLayout()
    var indexByKey = KeyIndex()
    var places = ChunkedArray<Place>()
    /// Places freed by a cancel (or a shutdown), reused last freed first: nothing of their
    /// last registration can be heard any more (revoked, or all delivered).
    var freePlaces: [UInt32] = []
    /// Places freed by a finish, in the order of their finishes' tickets: one is reused only
    /// once its finish has been delivered (see ``DeliveryGate``). A FIFO: `finishedPlaces`
    /// from `finishedHead` on.
    var finishedPlaces: [UInt32] = []
    var finishedHead = 0
    /// Every place's gate, which deliveries read without the lock.
    var gates = DeliveryGates()
    /// How to end the stream each place's observer feeds, for those that feed one
    /// (``attach(key:observer:ended:now:)`` with an end), once it is revoked.
    var streamEnds: [UInt32: @Sendable () -> Void] = [:]
    var isShutDown = false
    /// Counts the changes a store keeps: a countdown started, restored, ended, paused,
    /// resumed, or corrected at the foreground. Bumped by ``recordChange(_:)`` alone.
    var changes: UInt64 = 0
    /// Whether a store was attached (``restore(_:now:wall:boot:bootID:storePath:)``).
    var hasStore = false
    /// Between ``enteredBackground(now:boot:)`` and the foreground.
    var isInBackground = false

    typealias Registration = ObserverRegistration
    /// The pipeline its decisions append to (``EngineState/pipeline``).
    typealias Pipeline = DeliveryPipeline<Delivery>

    init(rules: Rules) {
        self.rules = rules
        tick = TickLength(rules.tick)
    }

    // MARK: - The scheduler's API

    mutating func start(key: String, duration: Duration, observer: CountdownObserver?, now: Moment, _ pipeline: inout Pipeline)
        throws(CountdownError) -> Decision<CountdownStart>
    {
        try start(key: key, hash: indexByKey.hash(key), duration: duration, observer: observer, now: now, &pipeline)
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
    mutating func start(
        key: String, hash: KeyIndex.Hash, duration: Duration, observer: CountdownObserver?, now: Moment,
        deliveredBelow: UInt64 = 0, _ pipeline: inout Pipeline
    ) throws(CountdownError) -> Decision<CountdownStart> {
        var decision = Decision(answer: CountdownStart.started)
        decision.answer = try start(
            key: key, hash: hash, duration: duration, observer: observer, now: now, deliveredBelow: deliveredBelow,
            &decision.actions, &pipeline)
        return decision
    }

    /// The same, deciding into the caller's `actions` (empty): the engine's start, the call
    /// made a million times in a row. A decision returned through the lock's closure was copied
    /// twice on its way (two `memcpy`s a start in callgrind's profile).
    ///
    /// `deliveredBelow`: as a cancel's; a place freed by a finish is reused once its finish is
    /// below it. No allocation: the observer goes in the place.
    mutating func start(
        key: String, hash: KeyIndex.Hash, duration: Duration, observer: CountdownObserver?, now: Moment,
        deliveredBelow: UInt64 = 0, _ actions: inout Actions, _ pipeline: inout Pipeline
    ) throws(CountdownError) -> CountdownStart {
        guard !key.isEmpty else { throw .emptyKey }
        guard duration > .zero else { throw .nonPositiveDuration(duration) }
        guard duration <= rules.maximumDuration else {
            throw .durationAboveMaximum(duration, maximum: rules.maximumDuration)
        }
        guard !isShutDown else { throw .shutDown }
        let probe = probe(key, hash)
        if let index = probe.place {
            return .attached(remaining: attach(at: Int(index), observer: observer, now: now, &actions, &pipeline))
        }
        if let capacity = rules.capacity, indexByKey.count >= capacity { throw .capacityExceeded(capacity: capacity) }
        let progress = Progress(duration: duration, tick: tick, at: now)
        let id = occupy(
            key: key, probe, observer: observer, progress: progress, deliveredBelow: deliveredBelow, &actions)
        arm(id, key: key, firstFire: progress.nextFire, &actions, &pipeline)
        emit(.tick(key, duration), told: true, at: Int(id.index), &actions, &pipeline)
        return .started
    }

    /// `ended`: how to end the stream `observer` feeds, once it is revoked.
    mutating func attach(key: String, observer: CountdownObserver?, ended: (@Sendable () -> Void)? = nil, now: Moment, _ pipeline: inout Pipeline)
        -> Decision<Duration?>
    {
        var registration: Registration?
        return attach(key: key, observer: observer, ended: ended, now: now, registration: &registration, &pipeline)
    }

    /// The same, naming the observer it registered in `registration` (left nil when there is
    /// no countdown under `key`), for a detach.
    mutating func attach(
        key: String, observer: CountdownObserver?, ended: (@Sendable () -> Void)? = nil, now: Moment,
        registration: inout Registration?, _ pipeline: inout Pipeline
    ) -> Decision<Duration?> {
        var decision = Decision<Duration?>(answer: nil)
        guard let index = place(of: key) else { return decision }
        decision.answer = attach(at: index, observer: observer, now: now, &decision.actions, &pipeline)
        let number = places[index].registration
        if let ended { streamEnds[UInt32(index)] = ended }
        registration = Registration(place: UInt32(index), number: number)
        return decision
    }

    /// Takes the observer `registration` names off the countdown under `key`, if it still
    /// observes it; the countdown runs on, observed by no one.
    mutating func detach(key: String, registration: Registration) -> Decision<Void> {
        var decision = Decision(answer: ())
        guard let index = place(of: key), UInt32(index) == registration.place,
            places[index].registration == registration.number
        else { return decision }
        revoke(index, &decision.actions)
        places[index].registration &+= 1  // nobody's: refused by nothing, told nothing
        return decision
    }

    /// `deliveredBelow`: every event of a lower ticket has been delivered (or dropped), as the
    /// delivery queue last said (see ``DeliveryPipeline/decided``); an observer with nothing left to deliver is retired, not
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
        // Idle, nothing of it queued: its gate is left as it is (at a million countdowns, a
        // cache miss saved). A stream is revoked all the same: its end is an effect.
        if places[Int(index)].lastTicket >= deliveredBelow || (!streamEnds.isEmpty && streamEnds[index] != nil) {
            revoke(Int(index), &actions)
        } else {
            // Taken out whole (the place's field left nil, moved, not copied), for the caller
            // to let go of after the lock.
            actions.letGo = places[Int(index)].observer.take()
        }
        let (_, handle) = vacate(Int(index), keyRemoved: true, &actions)
        freePlaces.append(index)
        if let handle { actions.effects.append(.disarm(handle)) }
        return true
    }

    mutating func pause(key: String, now: Moment, _ pipeline: inout Pipeline) -> Decision<Bool> {
        setPaused(true, key: key, now: now, &pipeline)
    }

    mutating func resume(key: String, now: Moment, _ pipeline: inout Pipeline) -> Decision<Bool> {
        setPaused(false, key: key, now: now, &pipeline)
    }

    /// Pauses or resumes the countdown under `key`; false when there is none, or it is so already.
    mutating func setPaused(_ paused: Bool, key: String, now: Moment, _ pipeline: inout Pipeline) -> Decision<Bool> {
        var decision = Decision(answer: false)
        guard let index = place(of: key), places[index].state.isPaused != paused else { return decision }
        places[index].arm &+= 1
        places[index].state = paused ? .paused : .running
        if paused {
            places[index].progress.pause(at: now)
            if places[index].generation < Delivery.answer - 1 { places[index].generation += 1 }
            gates.gate(at: index).silence(below: places[index].generation)
            stopTimer(index, &decision.actions)
        } else {
            places[index].progress.resume(at: now)
            restartTimer(index, &decision.actions, &pipeline)
        }
        recordChange(&decision.actions)
        decision.answer = true
        return decision
    }

    func remaining(key: String, now: Moment) -> Duration? {
        place(of: key).map { places[$0].progress.remaining(at: now) }
    }

    /// Who observes the countdown under `key`, if there is one: its observer's registration,
    /// and whether anyone is registered (nobody is once a stream's consumer went away).
    func observation(of key: String) -> (registration: Registration, observed: Bool)? {
        place(of: key).map { (Registration(place: UInt32($0), number: places[$0].registration), places[$0].observer != nil) }
    }

    var activeKeys: [String] {
        var keys: [String] = []
        keys.reserveCapacity(indexByKey.count)
        for index in places.indices where places[index].state.isOccupied { keys.append(places[index].key) }
        return keys
    }
    var activeCount: Int { indexByKey.count }
}
