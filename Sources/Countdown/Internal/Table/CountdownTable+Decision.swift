/// What the table hands its engine (``CountdownEngine``): decisions, their actions and effects, and the places it keeps.
extension CountdownTable {
    /// What the engine does, in order, after releasing the lock.
    enum Effect {
        case arm(CountdownID, key: String, firstFire: MonotonicInstant)
        case disarm(Handle)
        /// A handle kept while paused: look at the table again (paused, resumed, gone).
        case wake(Handle)
        case shorten(Handle, nextFire: MonotonicInstant)
        case endStream(@Sendable () -> Void)
        /// An observer the table let go of (cancelled, replaced, detached, shut down): released
        /// after the lock, for what it captured may go with it. (Its queued events hold their
        /// own references; its gate already refuses them.)
        case letGo(CountdownObserver)
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
        var persist: Bool { actions.persist }
    }

    /// What an operation left the engine to do. Not generic over the answer, so that the
    /// engine carries it out in one specialized function.
    struct Actions {
        var effects = SmallList<Effect>()
        /// What the decision put in the pipeline: whether a drain is owed.
        var handover = Handover.nothing
        /// A change the store keeps was made: ask for a write.
        var persist = false
        /// The observer a cancel let go of with nothing of it left to deliver: released by the
        /// engine after the lock (a field of its own, not an effect: the call made a million
        /// times in a row skips the effects' list).
        var letGo: CountdownObserver?
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
        /// Who hears the countdown; nil when nobody does (its stream's consumer went away, or
        /// it was restored from a store), and then nothing is decided for it.
        var observer: CountdownObserver?
        var progress: Progress
        /// Counts the pauses of the countdowns this place held: events decided before a pause
        /// carry a lower one, and the gate drops them (nothing of a paused countdown is heard,
        /// not even what was already queued).
        var generation: UInt32 = 0
        /// Counts the observers this place's countdowns had: a delivery carries the one it was
        /// decided for, and the place's ``DeliveryGate`` refuses those revoked.
        var registration: UInt32 = 0
        /// The ticket of the last event decided for this place's observer: once every ticket
        /// up to it is delivered, nothing of the observer is left in the queue.
        var lastTicket: UInt64 = 0
    }
}


// What a decision carries out of the lock is values and `Sendable` references: a start decides
// into actions its caller holds, across the lock's closure. Room made on another thread is
// handed into the lock the same way (a chunk of places is `Sendable` when a place is).
extension CountdownTable.Effect: Sendable where Handle: Sendable {}
extension CountdownTable.Actions: Sendable where Handle: Sendable {}
extension CountdownTable.Place: Sendable where Progress: Sendable, Handle: Sendable {}
