import CountdownSupport
import Dispatch
import Synchronization

/// The engine every built-in backend runs: an ``EngineState`` under a lock (the
/// ``CountdownTable`` and the ``DeliveryPipeline`` its decisions append to), the mechanism that
/// times its countdowns, the ``StoreGate``, and the ``EngineRuntime`` everything from the world
/// comes through.
///
/// Each call decides, then acts: it takes the lock, reads the mechanism's clock, lets the table
/// decide (its events go into the pipeline as they are decided), releases the lock, and only
/// then does what the table decided (``carryOut(_:persist:drain:)``): arms and disarms the
/// mechanism's timers, lets go of observers, ends streams, asks the store for a write, queues a
/// drain on the delivery queue (``drain(lingering:continuing:)``), which runs what a
/// ``DrainRun`` decides: takes the events a batch at a time and delivers them.
///
/// Instants are read with the lock held: read before it, they would be stale by however long
/// the lock took, and a progress that also reads another clock would disagree with them.
/// Observers are called on the delivery queue without the lock, each delivery checked against
/// its place's ``DeliveryGate``, so they may call back in; so may the mechanism's hooks.
final class CountdownEngine<Mechanism: CountdownMechanism>: Sendable {
    typealias State = EngineState<Mechanism.Progress, Mechanism.Handle>
    typealias Table = State.Table
    typealias FireResult = Table.FireResult
    typealias WorkerStep = Table.WorkerStep

    let settings: SchedulerSettings
    let mechanism: Mechanism
    let runtime: EngineRuntime
    let state: Locked<State>
    /// The table's key hasher, which never changes: a call hashes its key before the lock.
    private let keyHasher: KeyHash
    /// What the drain and the deciding threads tell each other without the lock.
    let signals = DeliverySignals()
    let store = StoreGate()

    /// - Parameter runtime: the world; `.system(deliveryQueue: settings.deliveryQueue)` unless
    ///   virtual.
    init(settings: SchedulerSettings, mechanism: Mechanism, runtime: EngineRuntime? = nil) {
        self.settings = settings
        self.mechanism = mechanism
        self.runtime = runtime ?? .system(deliveryQueue: settings.deliveryQueue)
        let state = State(rules: .init(
            tick: settings.tickInterval, maximumDuration: settings.maximumDuration, capacity: settings.capacity,
            arming: mechanism.arming))
        keyHasher = state.table.keyHasher
        self.state = Locked(state)
        mechanism.bind(to: self)
    }

    // MARK: - The scheduler's API

    func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        // Hashed before the lock, and its index line fetched while the clocks are read.
        let hash = KeyIndex.Hash(key, hasher: keyHasher)
        // Read before the lock, as a cancel's: a place a finish freed is reused once delivered.
        let delivered = signals.deliveredBelow
        var actions = Table.Actions()
        let answer = try state.withLock { state throws(CountdownError) in
            state.table.prefetch(hash)
            return try state.table.start(
                key: key, hash: hash, duration: duration, observer: observer, now: mechanism.now(),
                deliveredBelow: delivered, &actions, &state.pipeline)
        }
        carryOut(&actions)
        return answer
    }

    func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        var registration: Table.Registration?
        return attach(key: key, observer: observer, registration: &registration)
    }

    /// `ended`: how to end the stream `observer` feeds, when it is revoked. `registration`:
    /// the observer registered, for a detach.
    private func attach(
        key: String, observer: @escaping CountdownObserver, ended: (@Sendable () -> Void)? = nil,
        registration: inout Table.Registration?
    ) -> Duration? {
        var decision = state.withLock {
            $0.attach(key: key, observer: observer, ended: ended, now: mechanism.now(), registration: &registration)
        }
        let answer = decision.answer
        carryOut(&decision.actions)
        return answer
    }

    /// A stream attached as `attach` attaches an observer. It ends after the finish, or when
    /// the countdown is cancelled, replaced by another observer or shut down; a consumer that
    /// goes away detaches, and the countdown runs on with no observer.
    ///
    /// Unbounded: a consumer that falls behind is owed at most the countdown's ticks.
    func events(key: String) -> AsyncStream<CountdownEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: CountdownEvent.self)
        var registration: Table.Registration?
        let attached = attach(
            key: key,
            observer: { event in
                continuation.yield(event)
                if event.kind == .finished { continuation.finish() }
            },
            ended: { continuation.finish() }, registration: &registration)
        guard attached != nil, let registration else {
            continuation.finish()
            return stream
        }
        // Set after the attach, which names the registration: a consumer cannot have gone
        // before the stream is returned, and an end meanwhile (a cancel, a replacement) ended it
        // with `.finished`, which detaches nothing.
        continuation.onTermination = { [weak self] termination in
            guard case .cancelled = termination, let self else { return }
            var decision = self.state.withLock { $0.detach(key: key, registration: registration) }
            self.carryOut(&decision.actions)
        }
        return stream
    }

    func cancel(key: String) -> Bool {
        let delivered = signals.deliveredBelow
        let hash = KeyIndex.Hash(key, hasher: keyHasher)
        var actions = Table.Actions()
        let answer = state.withLock { $0.table.cancel(key: key, hash: hash, deliveredBelow: delivered, &actions) }
        carryOut(&actions)
        return answer
    }

    func pause(key: String) -> Bool {
        var decision = state.withLock { $0.pause(key: key, now: mechanism.now()) }
        let answer = decision.answer
        carryOut(&decision.actions)
        return answer
    }

    func resume(key: String) -> Bool {
        var decision = state.withLock { $0.resume(key: key, now: mechanism.now()) }
        let answer = decision.answer
        carryOut(&decision.actions)
        return answer
    }

    func remaining(key: String) -> Duration? {
        state.withLock { $0.remaining(key: key, now: mechanism.now()) }
    }

    /// Who observes the countdown under `key`: its observer's registration, and whether
    /// anyone is registered (nobody is once a stream's consumer went away). For tests.
    func observation(key: String) -> (registration: Table.Registration, observed: Bool)? {
        state.withLock { $0.observation(of: key) }
    }

    var activeKeys: [String] { state.withLock { $0.activeKeys } }

    var activeCount: Int { state.withLock { $0.activeCount } }

    // MARK: - The app's lifecycle

    /// Marks, in every running countdown that counts ticks, the time the app went to the
    /// background (nothing to do for a progress that reads a clock), then waits until the
    /// store, if one is attached, holds every change: the process may be frozen and killed
    /// from here on.
    func enteredBackground() {
        defer { waitUntilStored() }
        guard Mechanism.Progress.countsTicks else { return }
        var decision = state.withLock { $0.enteredBackground(now: mechanism.now(), boot: runtime.bootClock()) }
        carryOut(&decision.actions)
    }

    /// Takes off, in every countdown marked at the background, the time its ticks did not
    /// count; tells its observer the corrected remaining time (or the finish), and moves its
    /// timer onto the corrected grid.
    func enteredForeground() {
        guard Mechanism.Progress.countsTicks else { return }
        var decision = state.withLock { $0.enteredForeground(now: mechanism.now(), boot: runtime.bootClock()) }
        carryOut(&decision.actions)
    }

    // MARK: - The store

    /// Restores the countdowns `store` keeps, then writes every change to it. See
    /// ``KeyedCountdownScheduler/restore(from:)``.
    func restore(from store: CountdownStore) throws(CountdownStoreError) -> CountdownRestoration {
        try store.claim()
        var decision: Table.Decision<CountdownRestoration>
        do throws(CountdownStoreError) {
            let records = try store.read()
            let clocks = store.clocks
            let writer = StoreWriter(store: store, executor: runtime.makeWriteExecutor()) { [weak self] written in
                self?.snapshot(changedSince: written, clocks: clocks)
            } changeCount: { [weak self] in
                self?.state.withLock { $0.isShutDown ? nil : $0.changes }
            }
            decision = try state.withLock { table throws(CountdownStoreError) in
                // The store's clocks first, the scheduler's last: the time left is read at the
                // earlier instant and counted from the later one, so a restored deadline is
                // never early (a snapshot reads them the other way round, for the same reason).
                let wall = clocks.wall(), boot = clocks.boot()
                return try table.restore(
                    records, now: mechanism.now(), wall: wall, boot: boot, bootID: clocks.bootID, storePath: store.path)
            }
            // Attached only once the restore succeeded (a refused one leaves the file as it
            // is), and before the restored countdowns are armed. A change made in between is
            // carried by the write this restore asks for, which reads the whole table.
            self.store.attach(writer)
        } catch {
            store.release()
            throw error
        }
        let restoration = decision.answer
        carryOut(&decision.actions)
        // Written before returning: the expired countdowns leave the file at launch.
        waitUntilStored()
        return restoration
    }

    /// What the store keeps of every countdown, read at one instant; nil when nothing changed
    /// since `written`, or once shut down. The scheduler's clock first, the store's last.
    private func snapshot(changedSince written: UInt64?, clocks: StoreClocks) -> StoreWriter.Snapshot? {
        state.withLock { table in
            let now = mechanism.now()
            return table.snapshot(changedSince: written, now: now, wall: clocks.wall(), boot: clocks.boot(), bootID: clocks.bootID)
        }
    }

    /// Returns once the store, if one is attached, holds every change made before the call.
    func waitUntilStored() {
        store.waitUntilStored()
    }

    func shutdown() {
        let writer = store.attached
        // What runs at this instant is what the store keeps for the next launch.
        var (decision, last) = state.withLock { table -> (Table.Decision<Bool>, StoreWriter.Snapshot?) in
            guard !table.isShutDown else { return (Table.Decision(answer: false), nil) }
            let last = writer.flatMap { writer in
                let now = mechanism.now(), clocks = writer.store.clocks
                return table.snapshot(changedSince: nil, now: now, wall: clocks.wall(), boot: clocks.boot(), bootID: clocks.bootID)
            }
            return (table.shutdown(), last)
        }
        guard decision.answer else { return }
        if let last { writer?.writeLast(last) }
        carryOut(&decision.actions, persist: false)
    }

    // MARK: - Called by the mechanisms

    /// A timer fired for `id`. Each call is one fire: a tick-counting progress takes a tick
    /// off, whatever the time, or `intervals` ticks when the timer says it missed some.
    func fire(_ id: CountdownID, intervals: Int = 1) -> FireResult {
        var decision = state.withLock { $0.fire(id, now: mechanism.now(), intervals: intervals) }
        let answer = decision.answer
        carryOut(&decision.actions)
        return answer
    }

    /// Many fires at one wake-up of a mechanism that drives every countdown from one place.
    /// `batch` holds the countdowns due, earliest first; on return it holds those that
    /// continue, each with its next fire. The lock is taken once per ``batchChunk`` fires, not
    /// per fire, and not for the whole batch: at a million countdowns a batch is thousands of
    /// fires, and a `start` waiting behind all of them would wait milliseconds. Returns whether
    /// a drain is owed: the caller, which runs on the delivery queue, then calls
    /// ``deliverDecided()`` instead of waiting for a hop to the queue it is already on.
    func fire(_ batch: inout [DueItem]) -> Bool {
        var owed = false
        var kept = 0
        var next = 0
        while next < batch.count {
            let chunk = next..<min(next + Self.batchChunk, batch.count)
            next = chunk.upperBound
            var decision = state.withLock { state in
                state.table.fire(&batch, chunk, kept: &kept, now: mechanism.now(), &state.pipeline)
            }
            owed = carryOut(&decision.actions, drain: false) || owed
        }
        batch.removeLast(batch.count - kept)
        return owed
    }

    /// How many fires of one batch are decided under one acquisition of the lock.
    private static var batchChunk: Int { 256 }

    /// For a worker that sleeps between fires (the operation-queue backend): fires if the
    /// next fire is due, and says what to do next. Spurious wake-ups are harmless.
    func workerStep(_ id: CountdownID) -> WorkerStep {
        var decision = state.withLock { $0.workerStep(id, now: mechanism.now()) }
        let answer = decision.answer
        carryOut(&decision.actions)
        return answer
    }
}
