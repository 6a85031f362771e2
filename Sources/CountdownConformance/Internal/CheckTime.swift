import Countdown
import CountdownSupport
import Dispatch
import Foundation

/// How a check reads and lets pass the time of one scheduler: real time, or the scheduler's own
/// virtual clock when it drives one (``VirtualTimeScheduling``). Checks wait, settle and take
/// timestamps through it, so the same check judges a real backend in real time and a virtual one
/// in virtual time, where a wait advances the clock instead of sleeping.
final class CheckTime: Sendable {
    /// The clock a virtual backend drives; held weakly, so that a check can watch the scheduler
    /// go away when released. Nil in real time.
    private let virtual: WeakVirtual?
    /// How far a wait advances virtual time between two looks at its condition.
    private let step: Duration
    /// Records a failure of the check (an `advance` that threw).
    private let report: @Sendable (String) -> Void
    /// Set while the delivery queue is held: virtual time cannot pass then (an `advance`
    /// delivers on that queue before it returns).
    private let isHolding = Locked(false)

    init(scheduler: any CountdownScheduler, tick: Duration, report: @escaping @Sendable (String) -> Void) {
        virtual = (scheduler as? any VirtualTimeScheduling).map(WeakVirtual.init)
        step = max(tick / 4, .milliseconds(1))
        self.report = report
    }

    private init() {
        virtual = nil
        step = .milliseconds(1)
        report = { _ in }
    }

    /// Real time, for what waits outside a check.
    static let real = CheckTime()

    var mode: CheckResult.TimeMode { virtual == nil ? .real : .virtual }

    /// Nanoseconds on the check's clock: the monotonic clock, or the virtual clock's reading.
    func now() -> UInt64 {
        guard let virtual else { return SystemClocks.monotonic() }
        return nanoseconds(virtual.lastNow)
    }

    /// Lets `duration` pass: sleeps, or advances the virtual clock (not while the queue is held).
    func settle(_ duration: Duration) {
        guard let virtual else { return Thread.sleep(forTimeInterval: max(duration.seconds, 0)) }
        guard !isHolding.withLock({ $0 }) else { return }
        advance(virtual, by: duration)
    }

    /// Runs everything decided so far on the delivery queue.
    func drain(_ queue: DeliveryQueue) {
        if let virtual, !isHolding.withLock({ $0 }) { advance(virtual, by: .zero) }
        queue.drain()
    }

    /// Until `condition` holds or `timeout` has passed on the check's clock. In virtual time
    /// the clock advances a step at a time, and the condition is looked at after each step: a
    /// backend in virtual time delivers what is due before `advance` returns, so no real time
    /// is waited for.
    ///
    /// `pacedBy`: the condition is met on another thread (an `events(key:)` consumer's task),
    /// which real time, not virtual time, lets run; the closure reads how far that thread has
    /// got. After each virtual step the thread gets real time to catch up, until it has gone
    /// quiet for a millisecond (20 ms at most), so that the clock does not race ahead of it.
    func waitUntil(timeout: Duration = .seconds(10), pacedBy progress: (() -> Int)? = nil, _ condition: () -> Bool) -> Bool {
        let paced = progress != nil
        guard let virtual else { return realTimeWait(timeout: timeout, condition) }
        advance(virtual, by: .zero)
        if paced ? catchUp(condition, progress!) : condition() { return true }
        var left = timeout
        while left > .zero, virtual.scheduler != nil {
            let step = min(step, left)
            advance(virtual, by: step)
            left -= step
            if paced ? catchUp(condition, progress!) : condition() { return true }
        }
        return false
    }

    /// Real time for another thread to meet `condition`: until its `progress` has stood still
    /// for a millisecond, and 20 ms at most.
    private func catchUp(_ condition: () -> Bool, _ progress: () -> Int) -> Bool {
        let began = SystemClocks.monotonic()
        var last = progress(), lastChange = began
        while true {
            if condition() { return true }
            let now = SystemClocks.monotonic()
            if now - began >= 20_000_000 || now - lastChange >= 1_000_000 { return false }
            Thread.sleep(forTimeInterval: 0.0002)
            let seen = progress()
            if seen != last { last = seen; lastChange = SystemClocks.monotonic() }
        }
    }

    /// Holds the delivery queue while `body` runs (see ``DeliveryQueue/holding(_:)``); in
    /// virtual time no time passes meanwhile.
    func holding<T>(_ queue: DeliveryQueue, _ body: () throws -> T) rethrows -> T {
        isHolding.withLock { $0 = true }
        defer { isHolding.withLock { $0 = false } }
        return try queue.holding(body)
    }

    private func advance(_ virtual: WeakVirtual, by duration: Duration) {
        guard let scheduler = virtual.scheduler else { return }
        do {
            try scheduler.advance(by: duration)
        } catch {
            report("advance(by: \(duration)) threw \(error)")
        }
    }
}

/// A virtual scheduler held weakly, with the last reading of its clock.
/// `@unchecked Sendable`: `scheduler` is set once before it is shared (Swift's weak loads are
/// thread-safe), and the last reading is kept under its lock.
private final class WeakVirtual: @unchecked Sendable {
    weak var scheduler: (any VirtualTimeScheduling)?
    private let reading: Locked<Duration>

    init(_ scheduler: any VirtualTimeScheduling) {
        self.scheduler = scheduler
        reading = Locked(scheduler.now)
    }

    /// The clock now (kept, as each reading is), or where it stood when the scheduler went away.
    var lastNow: Duration {
        if let scheduler { let now = scheduler.now; reading.withLock { $0 = now }; return now }
        return reading.withLock { $0 }
    }
}
