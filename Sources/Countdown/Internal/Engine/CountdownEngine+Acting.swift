import CountdownSupport

/// What the engine does once the table decided: hands the decision's events over before the
/// lock is released, and carries out the rest after it.
extension CountdownEngine {
    /// The table, and the outbox of the events it decided, under one lock. A decision's events
    /// and first fires are handed to the outbox before the lock is released (``handOver(_:)``):
    /// in the order they were decided, with no second lock to take. With the outbox behind a
    /// lock of its own, each start took two (the second's line bounced between the starting
    /// thread and the drain's), and a start's handoff cost about 430 instructions in
    /// callgrind's profile. The drain takes this lock too, to take a batch: a swap of buffers,
    /// once per gather, not per event.
    struct Guarded: ~Copyable {
        var table: Table
        var outbox = Outbox()

        /// Hands a decision's events and first fires to the outbox, and a retired observer to
        /// a queued drain; `actions` says what is left for after the lock.
        mutating func handOver(_ actions: inout Table.Actions) {
            if !actions.events.isEmpty || !actions.arms.isEmpty {
                actions.handedOver = true
                actions.drainOwed = outbox.absorb(&actions.events, ticket: actions.ticket, arms: &actions.arms)
            }
            // Taken over by the drain queued to drop it; with none queued, the caller drops it.
            if let slot = actions.retired, outbox.retire(slot) { actions.retired = nil }
        }
    }

    /// Decides under the lock, hands the decision's events over, and carries out the rest
    /// once the lock is released: the shape of every call.
    func decide<Answer, Failure: Error>(
        _ body: (inout Table, inout Table.Actions) throws(Failure) -> Answer
    ) throws(Failure) -> Answer {
        var actions = Table.Actions()
        let answer = try state.withLock { (state) throws(Failure) -> Answer in
            let answer = try body(&state.table, &actions)
            state.handOver(&actions)
            return answer
        }
        carryOut(&actions)
        return answer
    }

    /// Does what a decision left to do after the lock (its events were handed over under it):
    /// the retired observer it still holds, its effects in order, then a write of the store and
    /// a drain. `drain`: queue the drain the events owe; false when the caller, on the delivery
    /// queue, delivers them itself. Returns whether a drain was owed. (Taken `inout`, so that
    /// nothing is copied on the way.)
    @discardableResult
    func carryOut(_ actions: inout Table.Actions, persist: Bool = true, drain: Bool = true) -> Bool {
        // Stored only when clear: a lingering drain clears it only when it takes the events,
        // so in a dense stream the line stays in this core's cache, read, not written.
        if actions.handedOver && outboxFilled.word.load(ordering: .relaxed) == 0 {
            outboxFilled.word.store(1, ordering: .releasing)
        }
        if let slot = actions.retired {
            actions.retired = nil
            // No drain was queued to drop it: dropped here, after the lock.
            slot.release()
        }
        actions.effects.removeAll { perform($0) }
        if persist && actions.persist { store.changed() }
        if drain && actions.drainOwed { queueDrain() }
        return actions.drainOwed
    }

    private func perform(_ effect: Table.Effect) {
        switch effect {
        case .arm(let id, let key, let firstFire):
            let handle = mechanism.arm(id, key: key, firstFire: firstFire, engine: self)
            // Kept if the countdown is still armed so; otherwise the table has it disarmed.
            decide { $0.keep(handle, for: id).handing(&$1) }
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
    /// heap as the places an append makes, then faulted in off the caller's path, by the
    /// runtime's background work (a thread of its own that runs only on a core nothing else
    /// wants: the ticker, the delivery queue and the starts preempt it, and when they leave it
    /// no time the room comes late and the appends fault the pages in, as without it), so that
    /// neither the starts that fill it nor the table's lock wait for a page fault per 4 KiB.
    private func makeRoom() {
        // Handed over in a box the job empties: a copy left in its closure, which lives as
        // long as the thread, would make the table's first append copy the room.
        let handoff = Locked<Table.Room?>(Table.makeRoom())
        runtime.runInBackground(named: Self.roomMakerName) { [weak self] in
            guard let room = handoff.withLock({ $0.take() }) else { return }
            room.faultIn()
            self?.provide(room)
        }
    }

    /// At most 15 characters: Linux refuses longer thread names.
    static var roomMakerName: String { "countdown-room" }

    /// Whether room for more places, made ahead, waits in the table.
    var holdsRoomAhead: Bool { state.withLock { $0.table.holdsRoomAhead } }

    private func provide(_ room: sending Table.Room) {
        var room: Table.Room? = room
        state.withLock { $0.table.provide(&room) }
        // Not wanted after all: let go of here, after the lock.
        room = nil
    }
}
