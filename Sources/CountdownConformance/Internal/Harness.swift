import Countdown
import CountdownSupport
import Dispatch
import Foundation
import Synchronization

/// A scheduler under test, with the delivery queue and wall clock the suite gave it, and the
/// time the check reads and lets pass for it: real time, or the scheduler's own virtual clock.
final class Harness: Sendable {
    let scheduler: any CountdownScheduler
    let queue: DeliveryQueue
    let wallClock: MovableWallClock
    let tick: Duration
    let time: CheckTime

    /// The namespace this harness's scheduler was made on: another harness made with it shares
    /// its countdowns (a fleet backend's).
    let namespace: String

    init(
        tick: Duration, namespace: String = Harness.freshNamespace(), factory: CountdownConformance.Factory,
        report: @escaping @Sendable (String) -> Void
    ) throws {
        let queue = DeliveryQueue(report: report)
        let wallClock = MovableWallClock()
        let scheduler = try factory(.init(
            tickInterval: tick, deliveryQueue: queue.queue, wallClock: wallClock.clock, namespace: namespace))
        self.namespace = namespace
        self.scheduler = scheduler
        self.queue = queue
        self.wallClock = wallClock
        self.tick = tick
        time = CheckTime(scheduler: scheduler, tick: tick, report: report)
    }

    /// A namespace no other scheduler uses.
    static func freshNamespace() -> String {
        "cf-\(UInt64.random(in: 0...UInt64.max).description)"
    }

    /// How long a countdown lasts that the check acts on while it runs (pauses, cancels, attaches
    /// to) and never waits out: a minute, or the backend's maximum if shorter. Not seconds: a
    /// backend running late under load (CI once saw the task backend's wake-ups seconds late,
    /// six checks at once beside four lanes) skips the missed grid points and could finish a
    /// short one before the check acts, failing it for lateness, which is not what it judges.
    var longCountdown: Duration { min(.seconds(60), scheduler.profile.maximumDuration) }

    /// A recorder whose observer runs on this harness's queue and stamps this harness's time.
    func recorder() -> Recorder { Recorder(queue, time: time) }

    /// An observer for a countdown whose events the check does not read: each is still judged
    /// for where it ran (``DeliveryQueue/judging(_:_:)``).
    func ignoring(_ call: String) -> CountdownObserver { queue.judging(call) { _ in } }

    /// Nanoseconds on the check's clock for this scheduler.
    func now() -> UInt64 { time.now() }

    /// Lets `duration` pass for this scheduler (sleeping, or advancing its virtual clock).
    func settle(_ duration: Duration) { time.settle(duration) }

    /// Until `condition` holds, or `timeout` passed on this scheduler's clock.
    func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
        time.waitUntil(timeout: timeout, condition)
    }

    /// Runs everything decided so far on the delivery queue (in virtual time, by an advance of zero).
    func drain() { time.drain(queue) }

    /// Holds the delivery queue while `body` runs: deliveries pile up behind it.
    func holding<T>(_ body: () throws -> T) rethrows -> T { try time.holding(queue, body) }
}

/// A wall clock the suite can set forward or back, as a user changing the time would.
final class MovableWallClock: Sendable {
    private let offset = Locked(Duration.zero)

    var clock: CountdownClock {
        CountdownClock(name: "wall", followsWallClock: true) { [offset] in
            .seconds(Date().timeIntervalSince1970) + offset.withLock { $0 }
        }
    }

    func move(by change: Duration) { offset.withLock { $0 += change } }
}

// MARK: - Time

/// Whole nanoseconds of a duration; zero for a negative one (a backend may report anything).
func nanoseconds(_ d: Duration) -> UInt64 { UInt64(max(d.nanoseconds, 0)) }


/// What a "never before" comparison allows, and nothing else does: how far apart the check's
/// clock and the backend's may read the same instant.
enum ClockAllowance {
    /// Virtual time: the check reads the clock the backend runs on. Exact.
    static let virtual: UInt64 = 0
    /// Real time in one process: the check reads CLOCK_MONOTONIC; a backend may read the wall
    /// clock (slewed by NTP, up to 500 ppm: 0.15 ms over a 300 ms countdown) or ContinuousClock,
    /// and convert it through a `Double`. A backend 0.8 ms early is beyond it.
    static let process: UInt64 = 200_000
    /// A fleet: deadlines are read off the store's clock (Redis' `TIME`), another machine's,
    /// mapped to this one's through a round trip.
    static let fleet: UInt64 = 1_000_000

    static func of(_ mode: CheckResult.TimeMode, _ sharing: CountdownProfile.Sharing) -> UInt64 {
        mode == .virtual ? virtual : sharing == .fleet ? fleet : process
    }
}

/// Polls `condition` every 2 ms until it holds or `timeout` passes in real time: the watchdog of
/// every wait for the real world (a thread's exit, a scheduler's release). Checks run on threads
/// of their own, so a check that sleeps blocks nobody else. A wait for what a scheduler does in
/// time goes through its harness (``Harness/waitUntil(timeout:_:)``).
func realTimeWait(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let deadline = SystemClocks.monotonic() + nanoseconds(timeout)
    while SystemClocks.monotonic() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.002)
    }
    return condition()
}
