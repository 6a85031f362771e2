/// What the table hands its engine (``CountdownEngine``): decisions, their actions and effects, and the places it keeps.
extension CountdownTable {
    /// What the engine does, in order, after releasing the lock.
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

    /// What an operation left the engine to do. Not generic over the answer, so that the
    /// engine carries it out in one specialized function.
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
        /// of a managed one retains it. The engine takes it over.
        var retired: Unmanaged<ObserverSlot>?
        /// First fires for the drain to file, for a shared due-queue (``ArmingStyle/sharedDueQueue``).
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
        /// The mechanism's timer for it, as far as the table knows. (Before `state`: with no
        /// handle, the two fill the 8 bytes before the key, and a place stays within 112.)
        var timer = TimerState<Handle>.none
        /// Whether the place holds a countdown, and whether it runs.
        var state = CountdownState.vacant
        var key = ""
        /// The key's hash, so that a finish leaves the index without hashing the key again.
        var keyHash = KeyIndex.Hash(value: 0)
        var slot: ObserverSlot?
        var progress: Progress
        /// Counts the pauses of the countdowns this place held: events decided before a pause
        /// carry a lower one, and the slot drops them (nothing of a paused countdown is heard,
        /// not even what was already queued).
        var generation: UInt32 = 0
        /// The ticket of the last decision that gave an event to this place's observer: once
        /// every ticket up to it is delivered, nothing of the observer is left in the queue.
        var lastTicket: UInt64 = 0
    }
}


// What a decision carries out of the lock is values and `Sendable` references: a start decides
// into actions its caller holds, across the lock's closure. Room made on another thread is
// handed into the lock the same way (a chunk of places is `Sendable` when a place is).
extension CountdownTable.Effect: Sendable where Handle: Sendable {}
extension CountdownTable.Actions: Sendable where Handle: Sendable {}
extension CountdownTable.Place: Sendable where Progress: Sendable, Handle: Sendable {}
