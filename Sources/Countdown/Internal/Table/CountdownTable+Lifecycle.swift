/// The app's lifecycle, the store, and the shutdown, as the table decides them.
extension CountdownTable {
    // MARK: - The app's lifecycle

    /// Marks, in every running countdown that counts ticks, the time the app went to the
    /// background (`boot`: nanoseconds of the boot clock, which counts through a freeze).
    mutating func enteredBackground(now: Moment, boot: Int64) -> Decision<Void> {
        let decision = Decision(answer: ())
        guard Progress.countsTicks, !isInBackground, !isShutDown else { return decision }
        isInBackground = true
        for index in places.indices where places[index].state == .running {
            places[index].progress.enteredBackground(at: now, boot: boot)
        }
        return decision
    }

    /// Takes off, in every countdown marked at the background, the time its ticks did not
    /// count; tells its observer the corrected remaining time (or the finish), and moves its
    /// timer onto the corrected grid.
    mutating func enteredForeground(now: Moment, boot: Int64, _ pipeline: inout Pipeline) -> Decision<Void> {
        var decision = Decision(answer: ())
        guard Progress.countsTicks, isInBackground else { return decision }
        isInBackground = false
        for index in places.indices where places[index].state.isOccupied {
            guard let step = places[index].progress.enteredForeground(at: now, boot: boot) else { continue }
            switch step {
            case .finished:
                finishCountdown(index, &decision.actions, &pipeline)
            case .tick(let remaining):
                emit(.tick(places[index].key, remaining), at: index, &decision.actions, &pipeline)
                places[index].arm &+= 1
                retime(index, &decision.actions, &pipeline)
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
    mutating func restore(_ records: [CountdownRecord], now: Moment, wall: Int64, boot: Int64, bootID: String?, storePath: String, _ pipeline: inout Pipeline)
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
                let id = occupy(key: countdown.key, probe, observer: nil, progress: progress, &decision.actions)
                places[Int(id.index)].state = .paused
                decision.answer.paused[countdown.key] = countdown.remaining
            } else {
                let id = occupy(key: countdown.key, probe, observer: nil, progress: progress, &decision.actions)
                arm(Int(id.index), &decision.actions, &pipeline)
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
        for index in places.indices where places[index].state.isOccupied {
            let left = places[index].progress.remaining(at: now).nanoseconds
            // A paused countdown whose deadline had passed is on its way to its finish: kept
            // as a deadline that has passed, so that a restore reports it expired.
            let state: CountdownRecord.State = places[index].state == .paused && left > 0
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
        for index in places.indices where places[index].state.isOccupied {
            // The whole index goes below: no key leaves it one by one (a cache miss each).
            revoke(index, &decision.actions)
            let (_, handle) = vacate(index, keyRemoved: true, &decision.actions)
            if rules.arming.disarmsEachOnShutdown, let handle { decision.actions.effects.append(.disarm(handle)) }
        }
        places.removeAll()
        freePlaces = []
        finishedPlaces = []
        finishedHead = 0
        indexByKey = KeyIndex(hasher: indexByKey.hasher)
        decision.actions.effects.append(.shutDownMechanism)
        decision.answer = true
        return decision
    }
}
