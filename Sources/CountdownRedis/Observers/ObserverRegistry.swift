#if Redis
import Countdown

/// What this process observes of the fleet's countdowns, and every change to it, decided as a
/// value: each operation takes the instant and appends what to do to a ``FleetDecisions``;
/// ``LocalWatch`` carries that out. No clock, thread, queue or Redis call here, so that every
/// ordering of answers and messages can be tested without time.
///
/// A call that makes an observer here (a start, an attach) is *expected* before it is sent,
/// under the token it sends. Whatever is addressed to that token before its answer is observed
/// (another member's attach, cancel, pause, resume, the finish) is kept, in order, and applied
/// once the answer is; a message for a token neither expected nor observed is about an observer
/// already gone, and is dropped. Messages travel on other connections than answers, so either
/// may come first; neither order may orphan an observer.
struct ObserverRegistry {
    /// What a start's or an attach's answer makes this process observe.
    struct Answer {
        let key: String
        let generation: Int64
        let token: String
        let attachSerial: Int64
        let duration: Int64
        let phase: ObservedCountdown.Phase
        /// The pauses and resumes the server had counted when it answered.
        let change: Int64
        /// Nanoseconds to tell the observer at once (zero: no tick; the finish is on its way).
        let told: Int64
        let observer: FleetObserver
        /// ``ObservedCountdown/lead``.
        var lead: Int64 = 0
    }

    let tick: Int64
    /// On purpose, for the suite's own tests (``FleetDefects/dropsNoticesBeforeAnswers``).
    var dropsNoticesBeforeAnswers = false
    private(set) var entries: [Int64: ObservedCountdown] = [:]
    /// The generation observed under each key (the newest, when an older one waits for its end).
    private var current: [String: Int64] = [:]
    /// Calls on their way, by token, with what was addressed to it before its answer came.
    private var awaited: [String: (key: String?, kept: [FleetNotice])] = [:]
    /// Generations whose observer here was ended by a notice while calls were on their way, by
    /// the attach serial of that observer: an answer of this process that comes later with a
    /// lower serial is about a countdown already replaced here and ended (cancelled, finished,
    /// replaced elsewhere), and must not be observed anew. Emptied whenever no call is on its way.
    private var ended: [Int64: Int64] = [:]
    /// The keyspace strategy's expiries, matched to the countdowns observed here (and the keys
    /// of the calls on their way that name theirs).
    private var expiries = KeyspaceExpiries()
    private(set) var stopped = false
    /// Each countdown observed here that told its last tick, with its deadline: all that
    /// ``overdue(before:)`` looks through (a million observed cost nothing until they run out).
    private var lastTicked: [(deadline: Int64, generation: Int64)] = []

    init(tick: Int64) { self.tick = tick }

    var count: Int { entries.count }
    var awaitedCount: Int { awaited.count }
    var endedCount: Int { ended.count }
    func generation(of key: String) -> Int64? { current[key] }

    /// A call under `token` is about to be sent: what comes for it before its answer is kept,
    /// and an expiry of `key` when it names the key (``KeyspaceExpiries``). False once shut down.
    mutating func expect(_ token: String, key: String? = nil) -> Bool {
        guard !stopped else { return false }
        awaited[token] = (key, [])
        if let key { expiries.expect(key) }
        return true
    }

    /// The call under `token` is answered or failed: what was kept for it.
    private mutating func settle(_ token: String) -> [FleetNotice] {
        guard let call = awaited.removeValue(forKey: token) else { return [] }
        if let key = call.key { expiries.settle(key) }
        return call.kept
    }

    /// The call under `token` failed: it makes no observer here, and what came for it goes.
    mutating func abandon(_ token: String) {
        _ = settle(token)
        if awaited.isEmpty { ended.removeAll() }
    }

    /// The answer to an expected call: the observer hears its first tick at once, then observes
    /// the countdown here (replacing whatever this process observed of it), then hears what was
    /// kept for its token. False, observing nothing, once shut down (the observer ends).
    @discardableResult
    mutating func observe(_ answer: Answer, now: Int64, into d: inout FleetDecisions) -> Bool {
        let expiredBound = expiries.kept(answer.key)
        let early = settle(answer.token)
        guard !stopped else {
            d.deliveries.append(.end(answer.observer))
            return false
        }
        if answer.told > 0 {
            d.deliveries.append(.told(answer.observer, event(answer.key, .tick, answer.told)))
        }
        defer { if awaited.isEmpty { ended.removeAll() } }
        if let observed = current[answer.key], observed == answer.generation, let newer = entries[observed],
           newer.attachSerial > answer.attachSerial {
            // Two calls of this process answered out of order: the later attach, observed
            // first, replaced this one at the server already.
            d.deliveries.append(.end(answer.observer))
            return true
        }
        if let later = ended[answer.generation], later > answer.attachSerial {
            // The same, and the later one's countdown has ended here since.
            d.deliveries.append(.end(answer.observer))
            return true
        }
        // Generations grow fleet-wide: an older one answered after a newer one was observed
        // under the key ended at the server, and replaces nothing; a newer one replaces only
        // an observer of the same countdown (another generation waits for its own end, which is
        // addressed to its token and on its way).
        let older = current[answer.key].map { $0 > answer.generation } ?? false
        if !older, current[answer.key] == answer.generation, let replaced = entries.removeValue(forKey: answer.generation) {
            d.gates.append((replaced.observer, .max))
            d.deliveries.append(.end(replaced.observer))
        }
        if older {
            expiries.outlived(answer.key, answer.generation)
        } else if let previous = current[answer.key], previous != answer.generation, entries[previous] != nil {
            expiries.outlived(answer.key, previous)
        }
        var entry = ObservedCountdown(
            key: answer.key, generation: answer.generation, token: answer.token, attachSerial: answer.attachSerial,
            observer: answer.observer, duration: answer.duration, phase: answer.phase, change: answer.change,
            leastTold: answer.told, lead: answer.lead)
        fileNextTick(&entry, after: now, into: &d)
        entries[answer.generation] = entry
        if !older { current[answer.key] = answer.generation }
        for notice in early { apply(notice, now: now, into: &d) }
        if let expiredBound, finish(key: answer.key, deadlineAtMost: expiredBound, into: &d) { expiries.used(answer.key) }
        return true
    }

    /// A notice for a token: kept while its call is on its way, applied to its observer here,
    /// or dropped when that observer is gone (or was never this process's).
    mutating func receive(_ notice: FleetNotice, now: Int64, into d: inout FleetDecisions) {
        if awaited[notice.token] != nil {
            if !dropsNoticesBeforeAnswers { awaited[notice.token]!.kept.append(notice) }
            return
        }
        apply(notice, now: now, into: &d)
    }

    /// Ends the observer of `key` here, as a cancel's notice would: for the defect
    /// ``FleetDefects/silencesOnlyOnItsOwnCall`` only.
    mutating func endObserving(key: String, now: Int64, into d: inout FleetDecisions) {
        guard let generation = current[key], let entry = entries[generation] else { return }
        apply(FleetNotice(generation: generation, token: entry.token, kind: .cancelled), now: now, into: &d)
    }

    private mutating func apply(_ notice: FleetNotice, now: Int64, into d: inout FleetDecisions) {
        guard var entry = entries[notice.generation], entry.token == notice.token else { return }
        if !awaited.isEmpty, notice.kind.ends { ended[entry.generation] = max(ended[entry.generation] ?? 0, entry.attachSerial) }
        switch notice.kind {
        case .finished:
            remove(entry)
            d.deliveries.append(.finish(entry.observer, event(entry.key, .finished, 0)))
        case .cancelled, .replaced:
            remove(entry)
            d.gates.append((entry.observer, .max))
            d.deliveries.append(.end(entry.observer))
        case .paused(let remaining, let change):
            // A pause overtaken by a later resume (or the other way round) is stale: a member's
            // own call is answered on its connection, another's change read from its inbox.
            guard change > entry.change else { return }
            entry.change = change
            entry.phase = .paused(remaining: remaining)
            entry.epoch += 1
            entry.nextTick = nil
            d.gates.append((entry.observer, entry.epoch))
            entries[entry.generation] = entry
        case .resumed(let deadline, let change):
            guard change > entry.change else { return }
            entry.change = change
            entry.phase = .running(deadline: deadline)
            fileNextTick(&entry, after: now, into: &d)
            entries[entry.generation] = entry
        }
    }

    /// A keyspace notification said `key` expired: the oldest countdown observed here under it
    /// that runs finishes, unless its deadline is still more than `slack` ahead, less its
    /// ``ObservedCountdown/lead`` (the notification was about a countdown not observed here, or
    /// a paused one: neither is this one's end).
    /// One that finished nothing is kept for the answers of calls on their way (``KeyspaceExpiries``).
    mutating func finishExpired(key: String, slack: Int64, now: Int64, into d: inout FleetDecisions) {
        if !finish(key: key, deadlineAtMost: now + slack, into: &d) { expiries.keep(key, bound: now + slack) }
    }

    /// A start found `key` free at the server: the countdowns observed here under it that run
    /// have ended, their expiries not heard yet (the start's own lazy expiry sends one), unless
    /// a deadline is more than `slack` ahead. Not an expiry heard: nothing is kept for the
    /// start's own answer.
    mutating func finishFreed(key: String, slack: Int64, now: Int64, into d: inout FleetDecisions) {
        while finish(key: key, deadlineAtMost: now + slack, into: &d) {}
    }

    /// Finishes the oldest countdown observed under `key` that runs with a deadline at most
    /// `bound`; whether there was one.
    private mutating func finish(key: String, deadlineAtMost bound: Int64, into d: inout FleetDecisions) -> Bool {
        for generation in expiries.candidates(key, current: current[key]) {
            guard let entry = entries[generation], case .running(let deadline) = entry.phase, deadline - entry.lead <= bound else { continue }
            remove(entry)
            d.deliveries.append(.finish(entry.observer, event(key, .finished, 0)))
            return true
        }
        return false
    }

    /// The countdowns observed here that run and are past their deadline by `instant`: their
    /// finish is late, or lost with the countdown (``LocalWatch/endLost(generation:token:)``).
    /// Looks through those that told their last tick only, forgetting the ones that ended since.
    mutating func overdue(before instant: Int64) -> [ObservedCountdown] {
        var found: [ObservedCountdown] = []
        lastTicked.removeAll { item in
            guard let entry = entries[item.generation], case .running(let deadline) = entry.phase, deadline == item.deadline
            else { return true }
            if deadline < instant { found.append(entry) }
            return false
        }
        return found
    }

    /// Ends `generation`'s observer with its finish, as a claim's would, if it is still
    /// `token`'s here; whether it was.
    mutating func finishLost(generation: Int64, token: String, now: Int64, into d: inout FleetDecisions) -> Bool {
        guard entries[generation]?.token == token else { return false }
        apply(FleetNotice(generation: generation, token: token, kind: .finished), now: now, into: &d)
        return true
    }

    /// The tick filed for `instant` of `generation` is due: tell the remaining time, file the next.
    /// A tick held (`hearing` says its shard's inbox went unread too long) is not delivered;
    /// the next one is filed as usual.
    mutating func tick(generation: Int64, instant: Int64, now: Int64, hearing: InboxHearing = InboxHearing(), into d: inout FleetDecisions) {
        guard var entry = entries[generation], entry.nextTick == instant, case .running(let deadline) = entry.phase
        else { return }
        let remaining = min(deadline - now, entry.leastTold)
        if remaining > 0, !hearing.holds(entry.key, now: now) {
            entry.leastTold = remaining
            d.deliveries.append(.tick(entry.observer, epoch: entry.epoch, event(entry.key, .tick, remaining)))
        }
        fileNextTick(&entry, after: max(now, instant), into: &d)
        entries[generation] = entry
    }

    /// The consumer of `observer` left (an event stream): the countdown runs on, unobserved here.
    mutating func detach(_ observer: FleetObserver, into d: inout FleetDecisions) {
        guard let entry = entries.values.first(where: { $0.observer === observer }) else { return }
        remove(entry)
        d.gates.append((observer, .max))
    }

    /// Ends every observer here (their streams end); calls still on their way end theirs when
    /// answered.
    mutating func shutdown(into d: inout FleetDecisions) {
        guard !stopped else { return }
        stopped = true
        for entry in entries.values {
            d.gates.append((entry.observer, .max))
            d.deliveries.append(.end(entry.observer))
        }
        entries.removeAll()
        current.removeAll()
        lastTicked.removeAll()
        expiries = KeyspaceExpiries()
    }

    private mutating func remove(_ entry: ObservedCountdown) {
        entries[entry.generation] = nil
        if current[entry.key] == entry.generation { current[entry.key] = nil }
        expiries.ended(entry.key, entry.generation)
    }

    private mutating func fileNextTick(_ entry: inout ObservedCountdown, after now: Int64, into d: inout FleetDecisions) {
        guard case .running(let deadline) = entry.phase else {
            entry.nextTick = nil
            return
        }
        guard let instant = TickGrid.next(deadline: deadline, duration: entry.duration, tick: tick, after: now) else {
            entry.nextTick = nil
            // Ended ones are forgotten by the next look; with no one looking (redis(keyspace)),
            // here, so that the list stays within twice the countdowns observed.
            if lastTicked.count > 2 * entries.count + 64 { lastTicked.removeAll { entries[$0.generation] == nil } }
            lastTicked.append((deadline, entry.generation))
            return
        }
        entry.nextTick = instant
        d.ticks.append((instant, entry.generation))
    }

    private func event(_ key: String, _ kind: CountdownEvent.Kind, _ nanoseconds: Int64) -> CountdownEvent {
        CountdownEvent(key: key, kind: kind, remaining: .nanoseconds(nanoseconds))
    }
}
#endif
