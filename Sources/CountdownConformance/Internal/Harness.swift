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
        let queue = DeliveryQueue()
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

    /// A recorder whose observer runs on this harness's queue and stamps this harness's time.
    func recorder() -> Recorder { Recorder(queue, time: time) }

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

/// The delivery queue the suite hands a backend: it can tell whether a callback runs on it,
/// whether two callbacks overlap, and in which order things ran on it.
final class DeliveryQueue: Sendable {
    let queue = DispatchQueue(label: "countdown.conformance.delivery")
    private let marker = SpecificKey()
    /// Counts what ran on the queue (callbacks and markers), in the order it ran.
    private let sequence = Atomic<UInt64>(0)
    private let inFlight = Atomic<Int>(0)
    private let overlapCount = Atomic<Int>(0)

    /// `@unchecked Sendable`: `DispatchSpecificKey` is an immutable token, not annotated.
    private final class SpecificKey: @unchecked Sendable {
        let key = DispatchSpecificKey<UInt8>()
    }

    init() { queue.setSpecific(key: marker.key, value: 1) }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: marker.key) == 1 }

    /// How many callbacks began while another was still running.
    var overlaps: Int { overlapCount.load(ordering: .relaxed) }

    func nextSequence() -> UInt64 { sequence.add(1, ordering: .sequentiallyConsistent).newValue }

    /// Every event observers heard on this queue, in the order heard, folded into one number
    /// (FNV-1a of key, kind, remaining and the check's clock): two runs that heard the same
    /// events in the same order at the same instants have the same trace.
    private let traced = Locked((digest: UInt64(0xcbf2_9ce4_8422_2325), events: 0))

    func trace(_ event: CountdownEvent, at: UInt64) {
        traced.withLock { trace in
            func mix(_ value: UInt64) {
                var value = value
                for _ in 0..<8 {
                    trace.digest = (trace.digest ^ (value & 0xff)) &* 0x100_0000_01b3
                    value >>= 8
                }
            }
            for byte in event.key.utf8 { mix(UInt64(byte)) }
            mix(event.kind == .finished ? 1 : 0)
            mix(UInt64(bitPattern: event.remaining.nanoseconds))
            mix(at)
            trace.events += 1
        }
    }

    var trace: (digest: UInt64, events: Int) { traced.withLock { $0 } }

    /// Wraps a callback: counts overlaps.
    func entering() {
        if inFlight.add(1, ordering: .sequentiallyConsistent).oldValue > 0 {
            overlapCount.add(1, ordering: .relaxed)
        }
    }

    func leaving() { inFlight.subtract(1, ordering: .sequentiallyConsistent) }

    /// Runs everything queued so far.
    func drain() { queue.sync {} }

    /// Queues a marker; once it has run, its number is what the queue had run before it plus one.
    /// Whatever runs after the marker began after the call that queued it.
    func mark() -> Marker {
        let marker = Marker()
        queue.async { marker.set(self.nextSequence()) }
        return marker
    }

    /// Blocks the queue while `body` runs, so deliveries pile up behind it, as behind a slow
    /// observer or a busy main thread. Nothing is delivered during `body`.
    func holding<T>(_ body: () throws -> T) rethrows -> T {
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        queue.async {
            held.signal()
            release.wait()
        }
        held.wait()
        defer { release.signal() }
        return try body()
    }
}

final class Marker: Sendable {
    private let value = Atomic<UInt64>(0)
    func set(_ sequence: UInt64) { value.store(sequence, ordering: .releasing) }
    /// Zero until the marker has run.
    var sequence: UInt64 { value.load(ordering: .acquiring) }
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

/// Every event one observer received, with when it began and where it ran.
final class Recorder: Sendable {
    struct Record: Sendable {
        let event: CountdownEvent
        /// Nanoseconds on the check's clock (monotonic, or virtual) when the callback began.
        let at: UInt64
        let onDeliveryQueue: Bool
        /// Its place in what ran on the delivery queue.
        let sequence: UInt64
    }

    private let records = Locked<[Record]>([])
    let queue: DeliveryQueue
    let time: CheckTime

    init(_ queue: DeliveryQueue, time: CheckTime) {
        self.queue = queue
        self.time = time
    }

    var observer: CountdownObserver {
        { [self] event in
            let at = time.now()
            queue.entering()
            defer { queue.leaving() }
            let record = Record(
                event: event, at: at, onDeliveryQueue: queue.isCurrent, sequence: queue.nextSequence())
            queue.trace(event, at: at)
            records.withLock { $0.append(record) }
        }
    }

    var all: [Record] { records.withLock { $0 } }
    var count: Int { records.withLock { $0.count } }
    var ticks: [Record] { all.filter { $0.event.kind == .tick } }
    var finishes: [Record] { all.filter { $0.event.kind == .finished } }

    func wait(timeout: Duration = .seconds(10), until condition: ([Record]) -> Bool) -> Bool {
        time.waitUntil(timeout: timeout) { condition(self.all) }
    }

    func waitForFinish(timeout: Duration = .seconds(10)) -> Bool {
        wait(timeout: timeout) { $0.contains { $0.event.kind == .finished } }
    }
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
