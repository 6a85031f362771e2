@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Synchronization
import Testing

// Aimed at `reentrancy`, `concurrency`, `one-key`, `calls-from-observer` and `delivery`: calls from many threads and from observers.

/// Calls observers with a lock held that `cancel` also takes: a re-entrant cancel deadlocks.
final class DeadlocksOnReentrantCancel: Forwarding, @unchecked Sendable {
    private let lock = DispatchSemaphore(value: 1)

    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        { [lock] event in
            lock.wait()
            defer { lock.signal() }
            observer(event)
        }
    }

    override func cancel(key: String) -> Bool {
        lock.wait()
        defer { lock.signal() }
        return inner.cancel(key: key)
    }
}

/// Two starts that overlap in time corrupt each other: the later observer is told a remaining
/// larger than the one it was first told.
final class RacesConcurrentStarts: Forwarding, @unchecked Sendable {
    private let inFlight = Atomic<Int>(0)

    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        let overlapping = inFlight.add(1, ordering: .relaxed).oldValue > 0
        defer { inFlight.subtract(1, ordering: .relaxed) }
        Thread.sleep(forTimeInterval: 0.0002)  // widen the window, as a slow critical section would
        let outcome = try inner.start(key: key, duration: duration, observer: observer)
        if overlapping {
            later(.milliseconds(2)) { observer(CountdownEvent(key: key, kind: .tick, remaining: duration + .seconds(1))) }
        }
        return outcome
    }
}

/// A check-then-act start: looks whether the key runs, then starts, and answers what it saw;
/// two threads starting one key both answer `.started`.
final class ChecksThenStarts: Forwarding, @unchecked Sendable {
    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        let wasRunning = inner.remaining(key: key)
        Thread.sleep(forTimeInterval: 0.0005)  // a slow critical section, outside any lock
        let outcome = try inner.start(key: key, duration: duration, observer: observer)
        return wasRunning == nil ? .started : outcome
    }
}

/// A check-then-act cancel: two threads cancelling one countdown both answer true.
final class ChecksThenCancels: Forwarding, @unchecked Sendable {
    override func cancel(key: String) -> Bool {
        let wasThere = inner.remaining(key: key) != nil
        Thread.sleep(forTimeInterval: 0.0005)
        _ = inner.cancel(key: key)
        return wasThere
    }
}

/// `cancel` (or `pause`, or a replacing `start`) called from inside the countdown's own observer
/// works, and then one more tick reaches that observer a moment later.
final class TicksAfterCallFromObserver: Forwarding, @unchecked Sendable {
    enum Call: Sendable { case cancel, pause, replace }
    private let call: Call
    /// The observer running now, by key, while one runs (on the delivery queue).
    private let running = Locked<[String: CountdownObserver]>([:])

    init(_ inner: any CountdownScheduler, call: Call) {
        self.call = call
        super.init(inner)
    }

    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        { [running] event in
            running.withLock { $0[key] = observer }
            observer(event)
            running.withLock { _ = $0.removeValue(forKey: key) }
        }
    }

    /// From inside the observer of `key`: one more tick for it, later.
    private func oneMoreTick(_ key: String) {
        guard let observer = running.withLock({ $0[key] }) else { return }
        let left = inner.remaining(key: key) ?? .seconds(1)
        later(inner.tickInterval) { observer(CountdownEvent(key: key, kind: .tick, remaining: left)) }
    }

    override func cancel(key: String) -> Bool {
        if call == .cancel { oneMoreTick(key) }
        return inner.cancel(key: key)
    }

    override func pause(key: String) -> Bool {
        if call == .pause { oneMoreTick(key) }
        return inner.pause(key: key)
    }

    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        if call == .replace { oneMoreTick(key) }
        return try super.start(key: key, duration: duration, observer: observer)
    }
}

/// Made with a queue of its own instead of the one it was given.
final class DeliversOffQueue: Forwarding, @unchecked Sendable {}
