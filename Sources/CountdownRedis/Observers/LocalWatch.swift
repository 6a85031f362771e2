#if Redis
import Countdown
import CountdownSupport
import Dispatch
import Synchronization

/// The observers' side of a fleet member: carries out what its ``ObserverRegistry`` decides.
/// Under one lock it asks the registry, moves the gates it names, files the ticks in its
/// ``TickHeap`` and appends the deliveries to its ``DeliveryPipeline`` (the engine's, with the
/// same ``DrainRun``); after the lock it queues a drain on the delivery queue and wakes the
/// ticks' thread (``FleetTicker``) when an earlier tick was filed. Nothing else (no Redis call,
/// no queue, no observer) is touched under the lock.
final class LocalWatch: Sendable {
    let tick: Int64
    let queue: DispatchQueue

    private struct State {
        var registry: ObserverRegistry
        var hearing: InboxHearing
        var ticks = TickHeap()
        var pipeline = DeliveryPipeline<FleetDelivery>()
        /// The instant the ticks' thread sleeps until: only an earlier tick wakes it.
        var sleepingUntil: Int64 = 0
    }

    private let state: Locked<State>
    private let ticker = Locked<FleetTicker?>(nil)
    /// ``FleetDefects/silencesOnlyOnItsOwnCall``: false in every member a user makes.
    private let silencesOnlyOnItsOwnCall: Bool

    /// `shardOf` names the shard whose inbox tells of a key (``InboxHearing``).
    init(tick: Duration, queue: DispatchQueue, shardOf: @escaping @Sendable (String) -> Int = { _ in 0 }, defects: FleetDefects = []) {
        self.tick = tick.nanoseconds
        self.queue = queue
        var registry = ObserverRegistry(tick: tick.nanoseconds)
        registry.dropsNoticesBeforeAnswers = defects.contains(.dropsNoticesBeforeAnswers)
        silencesOnlyOnItsOwnCall = defects.contains(.silencesOnlyOnItsOwnCall)
        state = Locked(State(registry: registry, hearing: InboxHearing(shardOf: shardOf)))
    }

    static func now() -> Int64 { Int64(SystemClocks.monotonic()) }

    /// Starts the thread that delivers ticks.
    func startTicks(name: String) {
        ticker.withLock { $0 = FleetTicker(name: name) { [self] now in dueTicks(now) } }
    }

    // MARK: What the engines report

    /// A call that makes an observer is about to be sent under `token`. False once shut down.
    func expect(_ token: String, key: String? = nil) -> Bool { decide { r, _ in r.expect(token, key: key) } }

    /// A cancel of this member's own found nothing under `key`. A correct member has heard of
    /// whatever ended it from the notice; only the defect ends its observer here.
    func ownCancelFoundNothing(key: String) {
        guard silencesOnlyOnItsOwnCall else { return }
        let now = Self.now()
        decide { r, d in r.endObserving(key: key, now: now, into: &d) }
    }

    /// The call under `token` failed.
    func abandon(_ token: String) { decide { r, _ in r.abandon(token) } }

    /// The answer to an expected call. False once shut down.
    @discardableResult
    func observe(_ answer: ObserverRegistry.Answer) -> Bool {
        let now = Self.now()
        return decide { r, d in r.observe(answer, now: now, into: &d) }
    }

    /// A notice for one of the tokens this process sent.
    func receive(_ notice: FleetNotice) {
        let now = Self.now()
        decide { r, d in r.receive(notice, now: now, into: &d) }
    }

    /// The inbox reader of `shard` could not read, or has read everything it missed (``InboxHearing``).
    func inbox(_ change: InboxHearing.Change, shard: Int) { state.withLock { $0.hearing.apply(change, shard: shard) } }

    /// A keyspace notification said `key` expired.
    func finishExpired(key: String, slack: Int64) {
        let now = Self.now()
        decide { r, d in r.finishExpired(key: key, slack: slack, now: now, into: &d) }
    }

    /// A start found `key` free at the server (``ObserverRegistry/finishFreed(key:slack:now:into:)``).
    func finishFreed(key: String, slack: Int64) {
        let now = Self.now()
        decide { r, d in r.finishFreed(key: key, slack: slack, now: now, into: &d) }
    }

    /// The countdowns observed here that run and whose deadline passed more than `slack` ago.
    func overdue(by slack: Int64) -> [ObservedCountdown] {
        let before = Self.now() - slack
        return state.withLock { $0.registry.overdue(before: before) }
    }

    /// The countdown of `generation`, observed here under `token`, is gone from Redis with no
    /// word of its end on its way (a failover lost its start, an eviction, a `DEL` by hand):
    /// its observer hears the finish now, and it is counted in ``lostCountdowns``.
    func endLost(generation: Int64, token: String) {
        let now = Self.now()
        if decide({ r, d in r.finishLost(generation: generation, token: token, now: now, into: &d) }) {
            lostCountdowns.add(1, ordering: .relaxed)
        }
    }

    /// How many observers heard a finish because their countdown was gone from Redis.
    let lostCountdowns = Atomic<Int>(0)

    /// The consumer of `observer` left: the countdown runs on, unobserved here.
    func detach(_ observer: FleetObserver) { decide { r, d in r.detach(observer, into: &d) } }

    /// Ends every observer here (their streams end) and stops the ticks' thread. The pipeline
    /// is still delivered: an end is how a stream hears of the shutdown.
    func shutdown() {
        decide { r, d in r.shutdown(into: &d) }
        ticker.withLock { $0?.wake() }
    }

    var isStopped: Bool { state.withLock { $0.registry.stopped } }

    /// How many countdowns this process observes.
    var observedCount: Int { state.withLock { $0.registry.count } }

    /// How many calls that make an observer are on their way.
    var awaitedCount: Int { state.withLock { $0.registry.awaitedCount } }

    func generation(of key: String) -> Int64? { state.withLock { $0.registry.generation(of: key) } }

    /// Waits until the ticks' thread has ended (after ``shutdown()``), at most `timeout`.
    func waitForTicksEnded(timeout: Duration) -> Bool {
        ticker.withLock { $0 }?.waitForEnd(timeout: timeout) ?? true
    }

    // MARK: Carrying out

    /// On the ticks' thread: every tick due by `now`, then when to wake.
    private func dueTicks(_ now: Int64) -> FleetTicker.Next {
        let (next, queueDrain) = state.withLock { s -> (FleetTicker.Next, Bool) in
            if s.registry.stopped { return (.stop, false) }
            var d = FleetDecisions()
            while let top = s.ticks.peek(), top.instant <= now {
                s.ticks.pop()
                s.registry.tick(generation: top.generation, instant: top.instant, now: now, hearing: s.hearing, into: &d)
            }
            let queueDrain = carryOut(d, in: &s)
            let next = s.ticks.peek()?.instant
            s.sleepingUntil = next ?? .max
            return (next.map { .at($0) } ?? .whenWoken, queueDrain)
        }
        if queueDrain { queue.async { self.drain() } }
        return next
    }

    /// Runs `body` under the lock, carries out its decisions, then queues a drain when it is
    /// the first to fill the pipeline, and wakes the ticks' thread when an earlier tick was filed.
    @discardableResult
    private func decide<T>(_ body: (inout ObserverRegistry, inout FleetDecisions) -> T) -> T {
        let (result, queueDrain, wakeTicks) = state.withLock { s -> (T, Bool, Bool) in
            var d = FleetDecisions()
            let result = body(&s.registry, &d)
            let earliest = d.ticks.map(\.instant).min()
            let queueDrain = carryOut(d, in: &s)
            guard let earliest, earliest < s.sleepingUntil else { return (result, queueDrain, false) }
            s.sleepingUntil = earliest
            return (result, queueDrain, true)
        }
        if queueDrain { queue.async { self.drain() } }
        if wakeTicks { ticker.withLock { $0 }?.wake() }
        return result
    }

    /// Under the lock: moves the gates, files the ticks, queues the deliveries; whether a drain
    /// must be queued.
    private func carryOut(_ d: FleetDecisions, in s: inout State) -> Bool {
        for (observer, epoch) in d.gates { observer.close(to: epoch) }
        for filed in d.ticks { s.ticks.push(instant: filed.instant, generation: filed.generation) }
        return s.pipeline.append(contentsOf: d.deliveries) == .owingDrain
    }

    /// On the delivery queue: everything decided so far, in the order decided, and what is
    /// decided while it runs, a batch per hold of the lock, until its ``DrainRun`` ends it (at
    /// its turn it hands the queue back to a drain queued again). It never lingers: the ticks'
    /// thread wakes on its own, not on this queue.
    /// Each batch is taken with the member's hearing as it stands then: a tick decided before
    /// its shard's reader knew it could not read is held here as well (``InboxHearing``).
    private func drain() {
        var batch = DeliveryBatch<FleetDelivery>()
        var (run, hearing) = state.withLock {
            ($0.pipeline.beginDrain(at: SystemClocks.monotonic(), lingering: false, continuing: false, into: &batch), $0.hearing)
        }
        while true {
            batch.releaseOversized()
            let delivering = !batch.deliveries.isEmpty
            if delivering {
                FleetDelivery.deliver(batch.deliveries, hearing: hearing)
                // Emptied with no lock held: an observer may go with its last delivery.
                batch.deliveries.removeAll(keepingCapacity: true)
            }
            let now = SystemClocks.monotonic()
            switch run.delivered(tookAnything: delivering, now: now) {
            case .end(let notingGap):
                state.withLock { $0.pipeline.end(keeping: &batch, notingGapAt: notingGap ? now : nil) }
                return
            case .take(let handingBack):
                if handingBack != nil { queue.async { self.drain() } }
                let ended: Bool
                (ended, hearing) = state.withLock {
                    ($0.pipeline.takeOrEnd(into: &batch, handedBack: handingBack != nil, at: now), $0.hearing)
                }
                if ended { return }
            case .gather, .takeLingering:
                preconditionFailure("a drain that does not linger neither gathers nor lingers")
            }
        }
    }
}
#endif
