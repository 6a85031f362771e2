import CountdownSupport
import Dispatch

/// Strategy 4: a deadline per countdown, and remaining = deadline − now computed from a clock
/// at every tick, as the articles did with timestamps. One shared ticker wakes for whichever
/// countdown is due next; there is no timer per key.
///
/// Reading a clock, it keeps its deadline through a frozen process (one catch-up tick on
/// resume, not a burst). With ``CountdownClock/wall`` (`Date`, the default, as the articles)
/// a change of the system clock moves the countdown: set forward, it ends early; set back, it
/// holds still (it never counts up). ``CountdownClock/continuous`` cannot be set.
public final class TimestampScheduler: CountdownScheduler {
    public let profile: CountdownProfile
    private let table: KeyedCountdowns<TimestampMechanism>

    /// - Parameter clock: what remaining time is read from: ``CountdownClock/wall`` (default)
    ///   or ``CountdownClock/continuous``, or a custom clock (a test clock that jumps).
    public init(
        tickInterval: Duration = .seconds(1),
        clock: CountdownClock = .wall,
        maximumDuration: Duration = CountdownLimits.defaultMaximumDuration,
        deliveryQueue: DispatchQueue? = nil
    ) throws(CountdownError) {
        let settings = try SchedulerSettings(
            tickInterval: tickInterval, maximumDuration: maximumDuration, capacity: nil,
            deliveryQueue: deliveryQueue, label: "countdown.timestamp")
        table = KeyedCountdowns(
            settings: settings,
            mechanism: TimestampMechanism(tick: tickInterval, clock: clock, ticker: Ticker()))
        profile = CountdownProfile(
            name: "timestamp",
            variant: clock.name,
            mechanism: "a deadline per countdown; remaining = deadline − \(clock.name) clock now, "
                + "at ticks from one shared ticker (a heap of due times on one DispatchSourceTimer)",
            threads: "none of its own: one dispatch timer and one serial queue for all countdowns",
            suspension: .keepsDeadline,
            wallClockJump: clock.followsWallClock ? .movesCountdown : .immune,
            capacity: nil,
            maximumDuration: maximumDuration)
    }

    deinit { table.shutdown() }

    /// The clock remaining time is read from.
    public var clock: CountdownClock { table.mechanism.clock }

    public var tickInterval: Duration { table.settings.tickInterval }
    public var deliveryQueue: DispatchQueue { table.settings.deliveryQueue }

    @discardableResult
    public func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        try table.start(key: key, duration: duration, observer: observer)
    }

    @discardableResult
    public func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        table.attach(key: key, observer: observer)
    }

    @discardableResult public func cancel(key: String) -> Bool { table.cancel(key: key) }
    @discardableResult public func pause(key: String) -> Bool { table.pause(key: key) }
    @discardableResult public func resume(key: String) -> Bool { table.resume(key: key) }
    public func remaining(key: String) -> Duration? { table.remaining(key: key) }
    public var activeKeys: [String] { table.activeKeys }
    public var activeCount: Int { table.activeCount }
    public func shutdown() { table.shutdown() }
}

struct TimestampMechanism: CountdownMechanism {
    let tick: Duration
    let clock: CountdownClock
    let ticker: Ticker

    func makeProgress(duration: Duration, now: MonotonicInstant) -> DeadlineTrack {
        DeadlineTrack(duration: duration, tick: tick, now: now, clock: clock)
    }

    func bind(to table: KeyedCountdowns<Self>) { ticker.bind(to: table) }

    func arm(_ id: CountdownID, firstFire: MonotonicInstant, table: KeyedCountdowns<Self>) {
        ticker.schedule(id, at: firstFire)
    }

    /// Nothing to release: the heap entry pops at its time and is found stale.
    func disarm(_ handle: Void) {}

    func shutdown() { ticker.stop() }
}

/// One dispatch timer armed for the earliest due countdown. When it fires it takes every
/// countdown that is due, lets the table handle each, and files each one's next fire.
final class Ticker: Sendable {
    private struct State {
        var heap = DueHeap()
        /// The instant the timer is armed for; nil when it is not armed.
        var armedFor: MonotonicInstant?
        weak var table: KeyedCountdowns<TimestampMechanism>?
        var isStopped = false
    }

    private let state = Locked(State())
    private let timer: OwnedDispatchTimer

    init() {
        let queue = DispatchQueue(label: "countdown.timestamp.ticker")
        let wakeUp = WeakTicker()
        timer = OwnedDispatchTimer(queue: queue) { wakeUp.ticker?.fireDue() }
        wakeUp.ticker = self
        timer.activate()
    }

    /// Lets the timer's handler reach the ticker without keeping it alive.
    private final class WeakTicker: @unchecked Sendable {
        // Written once, in `init`, before the timer can fire.
        weak var ticker: Ticker?
    }

    /// The table whose countdowns it drives; set once, before any countdown is armed.
    func bind(to table: KeyedCountdowns<TimestampMechanism>) {
        state.withLock { $0.table = table }
    }

    /// Called with the table's lock held; takes only the ticker's own lock.
    func schedule(_ id: CountdownID, at due: MonotonicInstant) {
        state.withLock { state in
            state.heap.insert(id, due: due)
            armIfEarlier(due, &state)
        }
    }

    func stop() {
        state.withLock { $0.isStopped = true }
        timer.cancel()
    }

    private func armIfEarlier(_ due: MonotonicInstant, _ state: inout State) {
        guard !state.isStopped else { return }
        if let armed = state.armedFor, armed <= due { return }
        state.armedFor = due
        timer.schedule(at: due, repeating: nil)
    }

    private func fireDue() {
        var batch: [CountdownID] = []
        let table = state.withLock { state in
            state.armedFor = nil
            state.heap.popDue(at: .now, into: &batch)
            return state.table
        }
        guard let table else { return }
        var next: [(CountdownID, MonotonicInstant)] = []
        next.reserveCapacity(batch.count)
        // The table's lock is taken per countdown, never with the ticker's lock held.
        for id in batch {
            if case .continues(let nextFire) = table.fire(id) { next.append((id, nextFire)) }
        }
        state.withLock { state in
            for (id, due) in next { state.heap.insert(id, due: due) }
            if let earliest = state.heap.earliest { armIfEarlier(earliest, &state) }
        }
    }
}
