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
        Self.probe(key, hash, in: indexByKey, places)
    }

    /// The probe, given the two fields it reads: a closure that read `places` from a method
    /// captured the whole table, copied onto the stack on every call (a 338-byte `memcpy` a
    /// start and a cancel in callgrind's profile); borrowed here, nothing is copied.
    private static func probe(
        _ key: String, _ hash: KeyIndex.Hash, in index: borrowing KeyIndex, _ places: borrowing ChunkedArray<Place>
    ) -> KeyIndex.Probe {
        index.probe(hash) { places[Int($0)].key == key }
    }

    /// Occupies a free place with the countdown under `key`, which `probe` did not find, and
    /// enters it in the index: a place a cancel freed, the last first; else the first place a
    /// finish freed if its finish is below `deliveredBelow` (delivered); else a new one.
    mutating func occupy(
        key: String, _ probe: KeyIndex.Probe, observer: CountdownObserver?, progress: Progress,
        deliveredBelow: UInt64 = 0, _ actions: inout Actions
    ) -> CountdownID {
        let index: Int
        let id: CountdownID
        // One access to the place, not one per field (each goes through two arrays' checks).
        if let free = freePlaces.popLast() ?? takeFinishedPlace(deliveredBelow: deliveredBelow) {
            index = Int(free)
            id = Self.occupy(&places[index], at: index, key: key, hash: probe.hash, observer: observer, progress: progress)
        } else {
            index = places.count
            // Room for every place to be freed, made while none is free: reserved empty, it
            // costs an allocation and no copy. Grown later by doubling, it copied millions of
            // entries under the lock as a burst of finishes freed their places.
            if freePlaces.capacity <= index { freePlaces.reserveCapacity(2 * (index + 1)) }
            if finishedPlaces.capacity <= index { finishedPlaces.reserveCapacity(2 * (index + 1)) }
            var place = Place(progress: progress)
            id = Self.occupy(&place, at: index, key: key, hash: probe.hash, observer: observer, progress: progress)
            if places.append(consume place) { actions.effects.append(.makeRoom) }
        }
        indexByKey.insert(probe, place: UInt32(index))
        recordChange(&actions)
        return id
    }

    static func occupy(
        _ place: inout Place, at index: Int, key: String, hash: KeyIndex.Hash, observer: CountdownObserver?,
        progress: Progress
    ) -> CountdownID {
        place.key = key
        place.keyHash = hash
        place.observer = observer
        // A new registration: above every one its gate refuses.
        place.registration &+= 1
        place.progress = progress
        place.state = .running
        place.serial &+= 1
        place.arm &+= 1
        return CountdownID(index: UInt32(index), serial: place.serial, arm: place.arm)
    }

    /// The first place a finish freed, if everything decided for it was delivered.
    mutating func takeFinishedPlace(deliveredBelow: UInt64) -> UInt32? {
        guard finishedHead < finishedPlaces.count else { return nil }
        let index = finishedPlaces[finishedHead]
        guard places[Int(index)].lastTicket < deliveredBelow else { return nil }
        finishedHead += 1
        if finishedHead == finishedPlaces.count {
            finishedPlaces.removeAll(keepingCapacity: true)
            finishedHead = 0
        } else if finishedHead >= 4_096 && finishedHead * 2 >= finishedPlaces.count {
            // Taken half: what is left moves to the front (each entry moves at most once a
            // doubling of the ones taken, so a take costs O(1) on average).
            finishedPlaces.removeFirst(finishedHead)
            finishedHead = 0
        }
        return index
    }

    /// Empties the place, and returns what the countdown held but its observer (the caller
    /// revokes it, or lets it go, or hands it its finish); every id that named the place
    /// becomes stale. The caller files the place as free (``freePlaces``) or finished
    /// (``finishedPlaces``). `keyRemoved`: the caller already took the key out of the index.
    mutating func vacate(_ index: Int, keyRemoved: Bool = false, _ actions: inout Actions)
        -> (key: String, handle: Handle?)
    {
        let (key, keyHash, handle) = Self.vacate(&places[index])
        recordChange(&actions)
        if !keyRemoved { indexByKey.remove(keyHash, place: UInt32(index)) }
        return (key, handle)
    }

    /// One access to the place, not one per field.
    static func vacate(_ place: inout Place) -> (key: String, keyHash: KeyIndex.Hash, handle: Handle?) {
        var key = ""
        swap(&key, &place.key)
        place.state = .vacant
        place.serial &+= 1
        place.arm &+= 1
        return (key, place.keyHash, place.timer.release())
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
    mutating func arm(_ index: Int, _ actions: inout Actions, _ pipeline: inout Pipeline) {
        arm(id(of: index), key: places[index].key, firstFire: places[index].progress.nextFire, &actions, &pipeline)
    }

    /// The same, for a caller that holds what the place holds (a start, which just filled it).
    mutating func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant, _ actions: inout Actions, _ pipeline: inout Pipeline) {
        if rules.arming == .sharedDueQueue {
            actions.handover.add(pipeline.append(DueItem(due: firstFire, index: id.index, arm: id.arm)))
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
    mutating func retime(_ index: Int, _ actions: inout Actions, _ pipeline: inout Pipeline) {
        if rules.arming == .worker {
            if let handle = places[index].timer.handle { actions.effects.append(.wake(handle)) }
            return
        }
        stopTimer(index, &actions)
        arm(index, &actions, &pipeline)
    }

    /// The countdown at `index` runs again: a timer from its next fire.
    mutating func restartTimer(_ index: Int, _ actions: inout Actions, _ pipeline: inout Pipeline) {
        if rules.arming == .worker, !places[index].timer.isNone {
            if let handle = places[index].timer.handle { actions.effects.append(.wake(handle)) }
            return
        }
        arm(index, &actions, &pipeline)
    }

    /// Replaces the observer of the countdown at `index` with `observer`, and tells it the time
    /// left at once; returns that time.
    mutating func attach(at index: Int, observer: CountdownObserver?, now: Moment, _ actions: inout Actions, _ pipeline: inout Pipeline) -> Duration {
        revoke(index, &actions)
        places[index].observer = observer
        places[index].registration &+= 1
        let remaining = places[index].progress.remaining(at: now)
        places[index].progress.told(remaining)
        // A countdown whose deadline passed is finishing: the new observer hears the finish,
        // never a tick of zero.
        if remaining > .zero { emit(.tick(places[index].key, remaining), told: true, at: index, &actions, &pipeline) }
        return remaining
    }

    /// Inlined: with the pipeline handed in as a second `inout`, the compiler stopped inlining it
    /// into a batch's loop (callgrind, 10 000 fires in virtual time: about 6 instructions more a
    /// fire, its call's prologue and epilogue).
    @inline(__always)
    mutating func advance(
        _ index: Int, now: Moment, intervals: Int, _ actions: inout Actions, _ pipeline: inout Pipeline
    ) -> FireResult {
        switch places[index].progress.advance(at: now, intervals: intervals, tick: tick) {
        case .finished:
            finishCountdown(index, &actions, &pipeline)
            return .finished
        case .tick(let remaining):
            emit(.tick(places[index].key, remaining), at: index, &actions, &pipeline)
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
    /// the stream it fed ends with that finish. The place is reused once the finish was
    /// delivered (``finishedPlaces``): until then its gate must refuse nothing of this observer.
    mutating func finishCountdown(_ index: Int, _ actions: inout Actions, _ pipeline: inout Pipeline) {
        let (key, handle) = vacate(index, &actions)
        if let handle { actions.effects.append(.disarm(handle)) }
        if !streamEnds.isEmpty { streamEnds.removeValue(forKey: UInt32(index)) }
        emit(.finished(key), at: index, &actions, &pipeline)
        // Let go of here, under the lock, and no effect made for it (a million finishes a second
        // at the end of a wave): the finish just decided holds the observer too, so this is never
        // the last reference, and nothing it captured can go under the lock.
        places[index].observer = nil
        finishedPlaces.append(UInt32(index))
    }

    /// Silences the observer of the countdown at `index` from before the call returns: its
    /// gate refuses its registration (and every earlier one); the place lets go of it, after
    /// the lock; a stream it fed ends.
    mutating func revoke(_ index: Int, _ actions: inout Actions) {
        gates.gate(at: index).revoke(below: places[index].registration &+ 1)
        if let observer = places[index].observer.take() { actions.effects.append(.letGo(observer)) }
        if !streamEnds.isEmpty, let end = streamEnds.removeValue(forKey: UInt32(index)) {
            actions.effects.append(.endStream(end))
        }
    }

    /// Decides an event for the observer of the countdown at `index`, stamped with its
    /// registration and pause generation, or, when it answers a call (`told`: the tick a start
    /// or an attach tells at once), with a generation no pause silences, and puts it in the
    /// pipeline, after every event decided before it. Nothing, when nobody observes it.
    ///
    /// Inlined: not inlined, each event went through its value witnesses on its way into the
    /// delivery (callgrind: about 200 instructions more a fire).
    @inline(__always)
    mutating func emit(_ event: consuming CountdownEvent, told: Bool = false, at index: Int, _ actions: inout Actions, _ pipeline: inout Pipeline) {
        guard let observer = places[index].observer else { return }
        let generation = told ? Delivery.answer : places[index].generation
        places[index].lastTicket = pipeline.decided
        actions.handover.add(pipeline.append(Delivery(
            observer: observer, event: event, gate: gates.gate(at: index),
            registration: places[index].registration, generation: generation)))
    }
}
