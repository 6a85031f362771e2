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

/// A backend's timing mechanism: the only part that differs between strategies. The shared
/// ``KeyedCountdowns`` decides under its lock and calls these hooks after releasing it, so a
/// hook may call back into the scheduler. A timer armed outside the lock may lose a race with
/// a pause, a cancel or a finish: the table then has the driver disarm it, and a fire it makes
/// meanwhile is recognised as stale.
protocol CountdownMechanism: Sendable {
    associatedtype Progress: CountdownProgress
    /// What the mechanism keeps per countdown (a timer, a worker).
    associatedtype Handle: Sendable

    /// The time now, as the mechanism's progress reads it. Called with the table's lock held,
    /// as the clock must be read at the instant of the decision.
    func now() -> Moment

    /// Called once, when the table is made: for a mechanism that drives every countdown from
    /// one place and needs the table itself, not per countdown.
    func bind(to table: KeyedCountdowns<Self>)

    /// Arrange for the table to be told when `firstFire` comes, and after that at every tick,
    /// until ``disarm(_:)``.
    func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant, table: KeyedCountdowns<Self>) -> Handle

    /// The countdown ended (finished, cancelled, paused, shut down), or the arm lost a race
    /// with one of those: release what `arm` made.
    func disarm(_ handle: Handle)

    /// Only with ``keepsHandleWhilePaused``: the countdown was paused or resumed; have the
    /// handle look at the table again.
    func wake(_ handle: Handle)

    /// The next interval is shorter than a tick: move the next fire to `nextFire`.
    func shorten(_ handle: Handle, nextFire: MonotonicInstant)

    /// Called once, after every countdown has been retired: end the mechanism's threads.
    func shutdown()
    /// Whether a drain of the delivery queue may linger, asleep, for tens of microseconds in a
    /// dense stream of events rather than end and be queued (its thread woken) for the next
    /// one. True only for a mechanism whose wake-ups run on the delivery queue itself: a
    /// lingering drain holds that queue (handing it back every half millisecond), and a
    /// mechanism with a timer thread of its own would wait for it (seen, when it spun:
    /// dispatch-source's bursts of ticks came later).
    var deliveryMayLinger: Bool { get }
    /// Whether ``shutdown()`` needs each countdown disarmed first. A mechanism whose shutdown
    /// takes every timer down at once says false, and is spared N disarms (the run loop's cost
    /// O(N) each).
    var disarmsEachOnShutdown: Bool { get }
    /// Whether the table keeps what ``arm(_:key:firstFire:table:)`` returns. False for a
    /// mechanism whose timers find a countdown by its place and arm alone (the shared ticker):
    /// it is spared a second visit to the table's lock per arm.
    var keepsHandles: Bool { get }
    /// Whether a countdown's handle stays across a pause, woken (``wake(_:)``) instead of
    /// disarmed and armed again: a worker that lives as long as its countdown.
    var keepsHandleWhilePaused: Bool { get }
    /// Whether decided events are handed to the delivery queue by a hop of their own. False
    /// for a mechanism whose driver delivers them itself, at a moment it chooses (virtual
    /// time: `advance` delivers what is due before it returns, and nothing runs behind a
    /// test's back).
    var queuesDeliveries: Bool { get }
    /// Whether arms wait for the delivery queue: the driver hands a decision's arms to the
    /// outbox with its events, under the one lock it takes for them, and the drain files them
    /// all with ``file(_:)`` before it delivers anything. For a mechanism whose timer fires on
    /// the delivery queue (a first fire cannot run before the drain queued with it has), and
    /// whose ``arm(_:key:firstFire:table:)`` keeps no handle: the caller is spared the
    /// timer's lock, and a burst of starts files its arms a batch at a time.
    var filesArmsOnDeliveryQueue: Bool { get }
    /// Only with ``filesArmsOnDeliveryQueue``: arms what a drain took, on the delivery queue.
    func file(_ arms: ContiguousArray<Outbox.Arm>)
}

extension CountdownMechanism {
    func now() -> Moment { Moment(monotonic: .now) }

    func bind(to table: KeyedCountdowns<Self>) {}

    func wake(_ handle: Handle) {}

    func shorten(_ handle: Handle, nextFire: MonotonicInstant) {}

    func shutdown() {}
    var deliveryMayLinger: Bool { false }
    var disarmsEachOnShutdown: Bool { true }
    var keepsHandles: Bool { true }
    var keepsHandleWhilePaused: Bool { false }
    var queuesDeliveries: Bool { true }
    var filesArmsOnDeliveryQueue: Bool { false }
    func file(_ arms: ContiguousArray<Outbox.Arm>) {
        preconditionFailure("arms filed on the delivery queue by a mechanism that arms at once")
    }
}
