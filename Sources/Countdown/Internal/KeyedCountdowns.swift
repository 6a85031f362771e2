import CountdownSupport
import Dispatch

/// The keyed bookkeeping every backend shares: key → countdown in O(1), attach, cancel,
/// pause and resume, validation, and delivery on the scheduler's serial queue. A backend adds
/// only its timing ``CountdownMechanism``.
///
/// Instants are read with the lock held: read before it, they would be stale by however long
/// the lock took, and a progress that also reads another clock would disagree with them.
///
/// Events are queued for delivery while the lock is held, so the order in which they were
/// decided is the order in which the delivery queue runs them; observers are called without
/// the lock, through an ``ObserverSlot``, so they may call back in.
final class KeyedCountdowns<Mechanism: CountdownMechanism>: Sendable {
    private struct Entry {
        let serial: UInt64
        var arm: UInt64
        var slot: ObserverSlot
        var progress: Mechanism.Progress
        var handle: Mechanism.Handle?
        var isPaused: Bool
    }

    private struct State: ~Copyable {
        var entries: [String: Entry] = [:]
        var lastSerial: UInt64 = 0
        var isShutDown = false

        mutating func nextSerial() -> UInt64 {
            lastSerial += 1
            return lastSerial
        }
    }

    let settings: SchedulerSettings
    let mechanism: Mechanism
    private let state = Locked(State())

    init(settings: SchedulerSettings, mechanism: Mechanism) {
        self.settings = settings
        self.mechanism = mechanism
        mechanism.bind(to: self)
    }

    // MARK: - The scheduler's API

    func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        guard !key.isEmpty else { throw .emptyKey }
        guard duration > .zero else { throw .nonPositiveDuration(duration) }
        guard duration <= settings.maximumDuration else {
            throw .durationAboveMaximum(duration, maximum: settings.maximumDuration)
        }
        return try state.withLock { state throws(CountdownError) -> CountdownStart in
            let now = MonotonicInstant.now
            guard !state.isShutDown else { throw .shutDown }
            if let remaining = attach(key: key, observer: observer, at: now, in: &state) {
                return .attached(remaining: remaining)
            }
            if let capacity = settings.capacity, state.entries.count >= capacity {
                throw .capacityExceeded(capacity: capacity)
            }
            let serial = state.nextSerial()
            let progress = mechanism.makeProgress(duration: duration, now: now)
            let id = CountdownID(key: key, serial: serial, arm: serial)
            let entry = Entry(
                serial: serial, arm: serial, slot: ObserverSlot(observer), progress: progress,
                handle: mechanism.arm(id, firstFire: progress.nextFire, table: self), isPaused: false)
            state.entries[key] = entry
            enqueue(.tick(key, duration), to: entry.slot)
            return .started
        }
    }

    func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        state.withLock { attach(key: key, observer: observer, at: .now, in: &$0) }
    }

    func cancel(key: String) -> Bool {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: key) else { return false }
            retire(entry)
            return true
        }
    }

    func pause(key: String) -> Bool {
        state.withLock { state in
            guard var entry = state.entries[key], !entry.isPaused else { return false }
            entry.progress.pause(at: .now)
            entry.isPaused = true
            entry.handle = entry.handle.flatMap(mechanism.pause)
            state.entries[key] = entry
            return true
        }
    }

    func resume(key: String) -> Bool {
        state.withLock { state in
            guard var entry = state.entries[key], entry.isPaused else { return false }
            entry.progress.resume(at: .now)
            entry.isPaused = false
            entry.arm = state.nextSerial()
            let id = CountdownID(key: key, serial: entry.serial, arm: entry.arm)
            entry.handle = mechanism.resume(
                entry.handle, id: id, firstFire: entry.progress.nextFire, table: self)
            state.entries[key] = entry
            return true
        }
    }

    func remaining(key: String) -> Duration? {
        state.withLock { $0.entries[key]?.progress.remaining(at: .now) }
    }

    var activeKeys: [String] {
        state.withLock { Array($0.entries.keys) }
    }

    var activeCount: Int {
        state.withLock { $0.entries.count }
    }

    func shutdown() {
        let first = state.withLock { state -> Bool in
            guard !state.isShutDown else { return false }
            state.isShutDown = true
            let disarm = mechanism.disarmsEachOnShutdown
            for entry in state.entries.values { retire(entry, disarming: disarm) }
            state.entries.removeAll()
            return true
        }
        if first { mechanism.shutdown() }
    }

    // MARK: - Called by the mechanisms

    enum FireResult: Equatable {
        /// The fire belongs to a countdown that was paused, cancelled, finished or replaced.
        case stale
        /// Handled; the countdown continues and its next fire is due then.
        case continues(nextFire: MonotonicInstant)
        case finished
    }

    /// A timer fired for `id`. Each call is one fire: a tick-counting progress takes a tick
    /// off, whatever the time, or `intervals` ticks when the timer says it missed some.
    func fire(_ id: CountdownID, intervals: Int = 1) -> FireResult {
        state.withLock { state in
            guard var entry = state.entries[id.key], entry.serial == id.serial,
                entry.arm == id.arm, !entry.isPaused
            else { return .stale }
            return advance(&entry, key: id.key, at: .now, intervals: intervals, in: &state)
        }
    }

    enum WorkerStep: Equatable {
        case sleep(until: MonotonicInstant)
        case waitForResume
        case exit
    }

    /// For a worker that sleeps between fires (the operation-queue backend): fires if the
    /// next fire is due, and says what to do next. Spurious wake-ups are harmless.
    func workerStep(_ id: CountdownID) -> WorkerStep {
        state.withLock { state in
            let now = MonotonicInstant.now
            guard var entry = state.entries[id.key], entry.serial == id.serial else { return .exit }
            if entry.isPaused { return .waitForResume }
            guard now >= entry.progress.nextFire else {
                return .sleep(until: entry.progress.nextFire)
            }
            switch advance(&entry, key: id.key, at: now, intervals: 1, in: &state) {
            case .continues(let next): return .sleep(until: next)
            case .finished, .stale: return .exit
            }
        }
    }

    // MARK: - Internals (lock held)

    /// Replaces the observer of the countdown under `key`, if there is one, and tells the new
    /// observer the remaining time at once.
    private func attach(
        key: String, observer: @escaping CountdownObserver, at now: MonotonicInstant, in state: inout State
    ) -> Duration? {
        guard var entry = state.entries[key] else { return nil }
        entry.slot.revoke()
        entry.slot = ObserverSlot(observer)
        let remaining = entry.progress.remaining(at: now)
        entry.progress.told(remaining)
        // A countdown whose deadline passed is finishing: the new observer hears the finish,
        // never a tick of zero.
        if remaining > .zero { enqueue(.tick(key, remaining), to: entry.slot) }
        state.entries[key] = entry
        return remaining
    }

    private func advance(
        _ entry: inout Entry, key: String, at now: MonotonicInstant, intervals: Int, in state: inout State
    ) -> FireResult {
        switch entry.progress.advance(at: now, intervals: intervals) {
        case .finished:
            state.entries[key] = nil
            if let handle = entry.handle { mechanism.disarm(handle) }
            let slot = entry.slot
            settings.deliveryQueue.async { slot.deliverLast(.finished(key)) }
            return .finished
        case .tick(let remaining):
            enqueue(.tick(key, remaining), to: entry.slot)
            if entry.progress.nextIntervalIsShort, let handle = entry.handle {
                mechanism.shorten(handle, nextFire: entry.progress.nextFire)
            }
        case .quiet:
            break
        }
        state.entries[key] = entry
        return .continues(nextFire: entry.progress.nextFire)
    }

    private func enqueue(_ event: CountdownEvent, to slot: ObserverSlot) {
        settings.deliveryQueue.async { slot.deliver(event) }
    }

    private func retire(_ entry: Entry, disarming: Bool = true) {
        entry.slot.revoke()
        if disarming, let handle = entry.handle { mechanism.disarm(handle) }
    }
}
