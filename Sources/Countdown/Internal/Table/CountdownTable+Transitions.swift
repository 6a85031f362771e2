/// The transitions every operation is made of.
extension CountdownTable {
    // MARK: - Transitions

    /// The place of the countdown armed as `id` says, if it is still armed so.
    func armed(_ id: CountdownID) -> Int? {
        let index = Int(id.index)
        guard index < places.count, places[index].arm == id.arm, places[index].state.isOccupied else { return nil }
        return index
    }

    func place(of key: String) -> Int? {
        probe(key).place.map(Int.init)
    }

    /// Hashes `key` once and looks it up; the probe says where it is, or where it would go.
    func probe(_ key: String) -> KeyIndex.Probe {
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
    func probe(_ key: String, _ hash: KeyIndex.Hash) -> KeyIndex.Probe {
        indexByKey.probe(hash) { places[Int($0)].key == key }
    }

    /// Occupies a free place with the countdown under `key`, which `probe` did not find, and
    /// enters it in the index.
    mutating func occupy(key: String, _ probe: KeyIndex.Probe, slot: ObserverSlot, progress: Progress, _ actions: inout Actions)
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
            // Room for every place to be freed, made while none is free: reserved empty, it
            // costs an allocation and no copy. Grown later by doubling, it copied millions of
            // entries under the lock as a burst of finishes freed their places.
            if freePlaces.capacity <= index { freePlaces.reserveCapacity(2 * (index + 1)) }
            var place = Place(progress: progress)
            id = Self.occupy(&place, at: index, key: key, hash: probe.hash, slot: slot, progress: progress)
            if places.append(consume place) { actions.effects.append(.makeRoom) }
        }
        indexByKey.insert(probe, place: UInt32(index))
        recordChange(&actions)
        return id
    }

    static func occupy(
        _ place: inout Place, at index: Int, key: String, hash: KeyIndex.Hash, slot: ObserverSlot, progress: Progress
    ) -> CountdownID {
        place.key = key
        place.keyHash = hash
        place.slot = slot
        place.progress = progress
        place.state = .running
        place.serial &+= 1
        place.arm &+= 1
        return CountdownID(index: UInt32(index), serial: place.serial, arm: place.arm)
    }

    /// Empties the place, and returns what the countdown held; every id that named the place
    /// becomes stale. `keyRemoved`: the caller already took the key out of the index.
    mutating func vacate(_ index: Int, keyRemoved: Bool = false, _ actions: inout Actions)
        -> (key: String, slot: ObserverSlot, handle: Handle?)
    {
        let (key, keyHash, slot, handle) = Self.vacate(&places[index])
        recordChange(&actions)
        if !keyRemoved { indexByKey.remove(keyHash, place: UInt32(index)) }
        freePlaces.append(UInt32(index))
        return (key, slot, handle)
    }

    /// One access to the place, not one per field.
    static func vacate(_ place: inout Place)
        -> (key: String, keyHash: KeyIndex.Hash, slot: ObserverSlot, handle: Handle?)
    {
        var key = ""
        swap(&key, &place.key)
        place.state = .vacant
        place.serial &+= 1
        place.arm &+= 1
        return (key, place.keyHash, place.slot.take()!, place.timer.release())
    }

    /// The one place the store's change count moves.
    mutating func recordChange(_ actions: inout Actions) {
        changes &+= 1
        actions.persist = true
    }

    func id(of index: Int) -> CountdownID {
        CountdownID(index: UInt32(index), serial: places[index].serial, arm: places[index].arm)
    }

    /// Decides a timer for the countdown at `index`, at its current arm.
    mutating func arm(_ index: Int, _ actions: inout Actions) {
        arm(id(of: index), key: places[index].key, firstFire: places[index].progress.nextFire, &actions)
    }

    /// The same, for a caller that holds what the place holds (a start, which just filled it).
    mutating func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant, _ actions: inout Actions) {
        if rules.arming == .sharedDueQueue {
            actions.arms.append(Outbox.Arm(id: id, firstFire: firstFire))
            return
        }
        assert(places[Int(id.index)].timer.handle == nil, "armed again while its timer is kept")
        places[Int(id.index)].timer = .pending(arm: id.arm)
        actions.effects.append(.arm(id, key: key, firstFire: firstFire))
    }

    /// The countdown at `index` was paused (its arm moved on): its timer stops.
    mutating func stopTimer(_ index: Int, _ actions: inout Actions) {
        if rules.arming == .worker {
            // The worker stays; woken, it finds the countdown paused. One on its way finds it so.
            if let handle = places[index].timer.handle { actions.effects.append(.wake(handle)) }
            return
        }
        // A pending arm is now stale: its handle is disarmed when the engine hands it back.
        if let handle = places[index].timer.release() { actions.effects.append(.disarm(handle)) }
    }

    /// The countdown at `index` moved onto another grid (its arm moved on): a kept worker is
    /// woken once, a timer replaced.
    mutating func retime(_ index: Int, _ actions: inout Actions) {
        if rules.arming == .worker {
            if let handle = places[index].timer.handle { actions.effects.append(.wake(handle)) }
            return
        }
        stopTimer(index, &actions)
        arm(index, &actions)
    }

    /// The countdown at `index` runs again: a timer from its next fire.
    mutating func restartTimer(_ index: Int, _ actions: inout Actions) {
        if rules.arming == .worker, !places[index].timer.isNone {
            if let handle = places[index].timer.handle { actions.effects.append(.wake(handle)) }
            return
        }
        arm(index, &actions)
    }

    /// Replaces the observer of the countdown at `index` with `slot`'s, and tells it the time
    /// left at once; returns that time.
    mutating func attach(at index: Int, slot: ObserverSlot, now: Moment, _ actions: inout Actions) -> Duration {
        revoke(places[index].slot!, &actions)
        places[index].slot = slot
        let remaining = places[index].progress.remaining(at: now)
        places[index].progress.told(remaining)
        // A countdown whose deadline passed is finishing: the new observer hears the finish,
        // never a tick of zero.
        if remaining > .zero { emit(slot, .tick(places[index].key, remaining), told: true, at: index, &actions) }
        return remaining
    }

    mutating func advance(_ index: Int, now: Moment, intervals: Int, _ actions: inout Actions) -> FireResult {
        switch places[index].progress.advance(at: now, intervals: intervals) {
        case .finished:
            finishCountdown(index, &actions)
            return .finished
        case .tick(let remaining):
            emit(places[index].slot!, .tick(places[index].key, remaining), at: index, &actions)
            let nextFire = places[index].progress.nextFire
            // Without a handle yet, `keep` shortens it.
            if places[index].progress.nextIntervalIsShort, let handle = places[index].timer.handle {
                actions.effects.append(.shorten(handle, nextFire: nextFire))
            }
            return .continues(nextFire: nextFire)
        case .quiet:
            return .continues(nextFire: places[index].progress.nextFire)
        }
    }

    /// The countdown at `index` finished: its place is freed before its observer hears it, and
    /// the stream it fed ends with that finish.
    mutating func finishCountdown(_ index: Int, _ actions: inout Actions) {
        let (key, slot, handle) = vacate(index, &actions)
        if let handle { actions.effects.append(.disarm(handle)) }
        if !streamEnds.isEmpty { streamEnds.removeValue(forKey: ObjectIdentifier(slot)) }
        emit(slot, .finished(key), at: index, &actions)
    }

    /// A countdown that ends without a finish: its observer hears nothing more.
    mutating func retire(_ slot: ObserverSlot, _ handle: Handle?, _ actions: inout Actions) {
        revoke(slot, &actions)
        if let handle { actions.effects.append(.disarm(handle)) }
    }

    /// Silences `slot`; a stream it fed ends.
    mutating func revoke(_ slot: ObserverSlot, _ actions: inout Actions) {
        actions.effects.append(.revoke(slot))
        if !streamEnds.isEmpty, let end = streamEnds.removeValue(forKey: ObjectIdentifier(slot)) {
            actions.effects.append(.endStream(end))
        }
    }

    /// Decides an event for `slot`, of the countdown at `index`, stamped with its pause
    /// generation, or, when it answers a call (`told`: the tick a start or an attach tells at
    /// once), with one no pause silences. A decision's first event gives its events their place
    /// in the order of all events (the ticket the outbox takes them by).
    mutating func emit(_ slot: ObserverSlot, _ event: CountdownEvent, told: Bool = false, at index: Int, _ actions: inout Actions) {
        if actions.events.isEmpty {
            actions.ticket = nextTicket
            nextTicket &+= 1
        }
        let generation = told ? Outbox.Delivery.answer : places[index].generation
        places[index].lastTicket = actions.ticket
        actions.events.append(Outbox.Delivery(slot: slot, event: event, generation: generation))
    }
}
