import CountdownSupport

/// What the engine does once the table decided and the lock is released.
extension CountdownEngine {
    /// Does what a decision left to do: its effects in order, then a write of the store and,
    /// when it put the first things in the pipeline (under the lock, as it decided them), a drain.
    /// `drain`: queue the drain owed; false when the caller, on the delivery queue, delivers
    /// them itself. Returns whether a drain was owed. (Taken `inout`, so that nothing is copied
    /// on the way.)
    @discardableResult
    func carryOut(_ actions: inout Table.Actions, persist: Bool = true, drain: Bool = true) -> Bool {
        if actions.handover != .nothing { signals.markFilled() }
        // Released here, after the lock: what it captured may go with it.
        if actions.letGo != nil { actions.letGo = nil }
        if !actions.effects.isEmpty { actions.effects.removeAll { perform($0) } }
        if persist && actions.persist { store.changed() }
        let owed = actions.handover == .owingDrain
        if drain && owed { queueDrain() }
        return owed
    }

    private func perform(_ effect: Table.Effect) {
        switch effect {
        case .arm(let id, let key, let firstFire):
            let handle = mechanism.arm(id, key: key, firstFire: firstFire, engine: self)
            // Kept if the countdown is still armed so; otherwise the table has it disarmed.
            var kept = state.withLock { $0.keep(handle, for: id) }
            carryOut(&kept.actions)
        case .disarm(let handle): mechanism.disarm(handle)
        case .wake(let handle): mechanism.wake(handle)
        case .shorten(let handle, let nextFire): mechanism.shorten(handle, nextFire: nextFire)
        case .endStream(let end): end()
        // Released as the effect is removed: after the lock, for what it captured may go with it.
        case .letGo: break
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
    var holdsRoomAhead: Bool { state.withLock { $0.holdsRoomAhead } }

    private func provide(_ room: sending Table.Room) {
        var room: Table.Room? = room
        state.withLock { $0.table.provide(&room) }
        // Not wanted after all: let go of here, after the lock.
        room = nil
    }
}
