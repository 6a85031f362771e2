import CountdownPrefetch

/// What the mechanisms tell the table: a handle made, a fire, a batch of fires, a worker's step.
extension CountdownTable {
    // MARK: - Told by the mechanisms

    /// What an `.arm` effect made for `id`: kept if the countdown is still armed so, else
    /// disarmed (it lost a race with a pause, a cancel or a finish).
    mutating func keep(_ handle: Handle, for id: CountdownID) -> Decision<Void> {
        var decision = Decision(answer: ())
        let index = Int(id.index)
        guard index < places.count, places[index].state.isOccupied, places[index].serial == id.serial,
              places[index].timer.isPending(arm: id.arm)
        else {
            decision.actions.effects.append(.disarm(handle))
            return decision
        }
        places[index].timer = .kept(handle)
        // A fire on the way may have left a last interval shorter than a tick, with no handle
        // to shorten (a countdown shorter than a tick is rescheduled to the same instant).
        if places[index].progress.nextIntervalIsShort {
            decision.actions.effects.append(.shorten(handle, nextFire: places[index].progress.nextFire))
        }
        // A pause or a resume on the worker's way (its arm moved on) found no handle to wake.
        if rules.arming == .worker, places[index].arm != id.arm { decision.actions.effects.append(.wake(handle)) }
        return decision
    }

    /// A timer fired for `id`. A tick-counting progress takes a tick off, whatever the time, or
    /// `intervals` ticks when the timer says it missed some.
    mutating func fire(_ id: CountdownID, now: Moment, intervals: Int = 1, _ pipeline: inout Pipeline) -> Decision<FireResult> {
        var decision = Decision(answer: FireResult.stale)
        guard let index = armed(id), places[index].state == .running else { return decision }
        decision.answer = advance(index, now: now, intervals: intervals, &decision.actions, &pipeline)
        return decision
    }

    /// The fires of `batch[chunk]`, due countdowns of a mechanism that drives every countdown
    /// from one place; those that continue are moved to `batch[kept...]`, each with its next
    /// fire, and `kept` counts them.
    mutating func fire(_ batch: inout [DueItem], _ chunk: Range<Int>, kept: inout Int, now: Moment, _ pipeline: inout Pipeline) -> Decision<Void> {
        var decision = Decision(answer: ())
        for position in chunk {
            prefetch(ahead: batch, of: position)
            let item = batch[position]
            guard let index = armed(CountdownID(index: item.index, serial: 0, arm: item.arm)), places[index].state == .running
            else { continue }
            if case .continues(let due) = advance(index, now: now, intervals: 1, &decision.actions, &pipeline) {
                batch[kept] = DueItem(due: due, index: item.index, arm: item.arm)
                kept += 1
            }
        }
        return decision
    }

    /// For a worker that sleeps between fires: fires if the next fire is due, and says what to
    /// do next. The worker lives as long as its countdown, across pauses, so it is recognised
    /// by `serial`.
    mutating func workerStep(_ id: CountdownID, now: Moment, _ pipeline: inout Pipeline) -> Decision<WorkerStep> {
        var decision = Decision(answer: WorkerStep.exit)
        let index = Int(id.index)
        guard index < places.count, places[index].serial == id.serial, places[index].state.isOccupied else { return decision }
        if places[index].state == .paused {
            decision.answer = .waitForResume
            return decision
        }
        let nextFire = places[index].progress.nextFire
        guard now.monotonic >= nextFire else {
            decision.answer = .sleep(until: nextFire)
            return decision
        }
        switch advance(index, now: now, intervals: 1, &decision.actions, &pipeline) {
        case .continues(let next): decision.answer = .sleep(until: next)
        case .finished, .stale: decision.answer = .exit
        }
        return decision
    }

    // MARK: - Fetching ahead

    /// Where a place keeps what a fire reaches through it, read as raw bits by the prefetch,
    /// which must not retain (an atomic write to a line not yet fetched) what it only hints at.
    struct PlaceLayout {
        let key = MemoryLayout<Place>.offset(of: \Place.key)!
        let keyHash = MemoryLayout<Place>.offset(of: \Place.keyHash)!
        let progress = MemoryLayout<Place>.offset(of: \Place.progress)!
    }

    /// How far ahead of the fire at hand a batch's places are fetched, and how far the lines
    /// they lead to: the key's storage, which the fire's event retains (the observer's context,
    /// retained too, has no offset a key path gives in a generic place, and is not fetched); the
    /// place's gate, which the drain reads for the event on this thread once the batch is
    /// decided (left unfetched, it was a miss of its own for every event); and, for a fire that may
    /// finish, the key's entry in the index. A batch's countdowns are at random places among a
    /// million: each of those lines is a miss of about 150 ns here, and taken one after the
    /// other they were most of a fire's time.
    static var placeLead: Int { 16 }
    static var referenceLead: Int { 8 }

    /// The mask the standard library applies to a large string's object bits for the address
    /// of its storage (64-bit platforms): the key's bytes and reference count are there.
    static var stringAddressMask: UInt { 0x0FFF_FFFF_FFFF_FFFF }

    /// Hints at the lines the fires `placeLead` and `referenceLead` after `position` touch. A
    /// hint only: a place that changed meanwhile, or a key stored inline (its bits are no
    /// address), costs a useless fetch and nothing else; nothing here is read for a decision.
    func prefetch(ahead batch: borrowing [DueItem], of position: Int) {
        let far = position &+ Self.placeLead
        if far < batch.count, Int(batch[far].index) < places.count { places.prefetch(Int(batch[far].index)) }
        let near = position &+ Self.referenceLead
        guard near < batch.count, Int(batch[near].index) < places.count else { return }
        if let gate = gates.address(of: Int(batch[near].index)) { countdown_prefetch(gate) }
        places.withElementPointer(at: Int(batch[near].index)) { place in
            let bytes = UnsafeRawPointer(place)
            let keyObject = bytes.load(fromByteOffset: layout.key + MemoryLayout<UInt>.size, as: UInt.self)
            countdown_prefetch(UnsafeRawPointer(bitPattern: keyObject & Self.stringAddressMask))
            let progress = (bytes + layout.progress).assumingMemoryBound(to: Progress.self)
            if progress.pointee.nextFireMayFinish(tick: tick) {
                indexByKey.prefetchHome(bytes.load(fromByteOffset: layout.keyHash, as: KeyIndex.Hash.self))
            }
        }
    }
}
