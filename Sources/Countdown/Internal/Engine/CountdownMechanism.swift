/// Identifies one arming of one countdown by its place in the table's slab. `serial` changes
/// every time the place holds a new countdown; `arm` every time a timer is armed for it (start,
/// pause, resume) and when it ends. A fire from a timer that was disarmed, or that belonged to
/// an earlier occupant of the place, is recognised as stale and ignored.
struct CountdownID: Hashable, Sendable {
    let index: UInt32
    let serial: UInt32
    let arm: UInt32
}

/// A reading of time at one instant: the monotonic clock every timer is scheduled on, and the
/// clock a progress reads remaining time from (in nanoseconds since that clock's epoch; zero
/// for a progress that counts ticks and reads no clock).
struct Moment: Sendable {
    var monotonic: MonotonicInstant
    var clock: Int64

    init(monotonic: MonotonicInstant, clock: Int64 = 0) {
        self.monotonic = monotonic
        self.clock = clock
    }
}

/// How a mechanism times its countdowns: the few kinds the strategies are, each with what the
/// engine does for it. A kind, not a set of capabilities: no combination that cannot work can
/// be written.
enum ArmingStyle: Equatable, Sendable {
    /// A timer per countdown (a dispatch source, a run-loop timer, a task). ``CountdownMechanism/arm(_:key:firstFire:engine:)``
    /// returns its handle, which the table keeps; a pause disarms it and a resume arms another.
    /// `shutdown`: whether the mechanism's own shutdown takes every timer down at once, or each
    /// is disarmed first.
    case timerPerCountdown(shutdown: TimerShutdown)
    /// One worker per countdown that sleeps between its fires and lives as long as its
    /// countdown: a pause or a resume wakes it (``CountdownMechanism/wake(_:)``), and it asks
    /// the engine what to do (``CountdownEngine/workerStep(_:)``).
    case worker
    /// One queue of due instants for every countdown, whose wake-ups run on the delivery queue
    /// (the timestamp ticker, in real or virtual time). No handle is kept: a fire finds its
    /// countdown by place and arm. A countdown's first fire rides the delivery pipeline beside its first
    /// tick and is filed by the drain (``CountdownMechanism/file(_:)``) before anything is
    /// delivered, so a start takes no timer lock and a burst of starts files a batch at a time;
    /// and the drain may linger in a dense stream (its wake-ups wait for the queue it holds at
    /// most one turn).
    case sharedDueQueue

    enum TimerShutdown: Equatable, Sendable {
        case disarmEach
        case allAtOnce
    }

    /// Whether a shutdown disarms each countdown's timer before the mechanism's own shutdown.
    var disarmsEachOnShutdown: Bool { self != .timerPerCountdown(shutdown: .allAtOnce) && self != .sharedDueQueue }
    /// Whether a drain of the delivery queue may linger, asleep, for tens of microseconds in a
    /// dense stream of events rather than end and be queued (its thread woken) for the next.
    /// Only where the wake-ups run on the delivery queue itself: a mechanism with a timer thread
    /// of its own would wait for the lingering drain (seen: dispatch-source's bursts of ticks
    /// came later).
    var deliveryMayLinger: Bool { self == .sharedDueQueue }
}

/// A backend's timing mechanism: the only part that differs between strategies. The engine
/// decides under its lock and calls these hooks after releasing it, so a hook may call back
/// into the scheduler. A timer armed outside the lock may lose a race with a pause, a cancel
/// or a finish: the table then has the engine disarm it, and a fire it makes meanwhile is
/// recognised as stale.
protocol CountdownMechanism: Sendable {
    associatedtype Progress: CountdownProgress
    /// What the mechanism keeps per countdown (a timer, a worker); `Void` for a shared due-queue.
    associatedtype Handle: Sendable

    /// Which kind of mechanism it is.
    var arming: ArmingStyle { get }

    /// The time now, as the mechanism's progress reads it. Called with the table's lock held,
    /// as the clock must be read at the instant of the decision.
    func now() -> Moment

    /// Called once, when the engine is made: for a mechanism that drives every countdown from
    /// one place and needs the engine itself, not per countdown.
    func bind(to engine: CountdownEngine<Self>)

    /// ``ArmingStyle/timerPerCountdown(shutdown:)`` and ``ArmingStyle/worker``: arrange for the
    /// engine to be told when `firstFire` comes, and after that at every tick, until
    /// ``disarm(_:)``.
    func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant, engine: CountdownEngine<Self>) -> Handle

    /// ``ArmingStyle/sharedDueQueue``: files the first fires a drain took, on the delivery queue.
    func file(_ firstFires: ContiguousArray<DueItem>)

    /// The countdown ended (finished, cancelled, paused, shut down), or the arm lost a race
    /// with one of those: release what `arm` made.
    func disarm(_ handle: Handle)

    /// ``ArmingStyle/worker``: the countdown was paused or resumed; have the worker look at the
    /// engine again.
    func wake(_ handle: Handle)

    /// The next interval is shorter than a tick: move the next fire to `nextFire`.
    func shorten(_ handle: Handle, nextFire: MonotonicInstant)

    /// Called once, after every countdown has been retired: end the mechanism's threads.
    func shutdown()
}

extension CountdownMechanism {
    func now() -> Moment { Moment(monotonic: .now) }
    func bind(to engine: CountdownEngine<Self>) {}
    func wake(_ handle: Handle) {}
    func shorten(_ handle: Handle, nextFire: MonotonicInstant) {}
    func shutdown() {}
    func file(_ firstFires: ContiguousArray<DueItem>) {
        preconditionFailure("arms filed on the delivery queue for \(arming), which arms each countdown at once")
    }
}

extension CountdownMechanism where Handle == Void {
    /// A shared due-queue keeps no handle and is never asked to arm one countdown: the drain
    /// files its arms.
    func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant, engine: CountdownEngine<Self>) {
        file([DueItem(due: firstFire, index: id.index, arm: id.arm)])
    }
    func disarm(_ handle: Void) {}
}
