@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Synchronization
import Testing

// Aimed at `finish`: once, never early, the key free at once.

final class FinishesTwice: Forwarding, @unchecked Sendable {
    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        { event in
            observer(event)
            if event.kind == .finished { observer(event) }
        }
    }
}

/// Turns the last tick into the finish: one tick early.
final class FinishesEarly: Forwarding, @unchecked Sendable {
    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        let done = Atomic<Bool>(false)
        let tick = inner.tickInterval
        return { event in
            guard !done.load(ordering: .relaxed) else { return }
            if event.kind == .finished || event.remaining <= tick {
                done.store(true, ordering: .relaxed)
                observer(CountdownEvent(key: event.key, kind: .finished, remaining: .zero))
            } else {
                observer(event)
            }
        }
    }
}

/// Runs each countdown `by` short and tells every observer and query `by` more than remains: its
/// ticks look whole, its first tick carries the full duration, and its finish comes `by` before
/// the deadline. A millisecond early is what "never early" forgave as clock granularity in
/// virtual time, where the clock reads exactly; 0.8 ms early on a backend that declares a 2 ms
/// tolerance hides among finishes that are late by design.
/// `@unchecked Sendable` as its base: it adds two immutable durations.
final class FinishesSlightlyEarly: Forwarding, @unchecked Sendable {
    private let by: Duration
    private let tolerance: Duration?

    /// `declaring`: the tolerance its profile declares, when not its inner scheduler's.
    init(_ inner: any CountdownScheduler, by: Duration, declaring tolerance: Duration? = nil) {
        self.by = by
        self.tolerance = tolerance
        super.init(inner)
    }

    override var profile: CountdownProfile {
        var profile = inner.profile
        if let tolerance { profile.tolerance = tolerance }
        return profile
    }

    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        let outcome = try inner.start(key: key, duration: max(duration - by, .nanoseconds(1)), observer: wrap(observer, key: key))
        if case .attached(let remaining) = outcome { return .attached(remaining: remaining + by) }
        return outcome
    }

    override func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        inner.attach(key: key, observer: wrap(observer, key: key)).map { $0 + by }
    }

    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        let by = self.by
        return { event in
            observer(event.kind == .tick ? CountdownEvent(key: event.key, kind: .tick, remaining: event.remaining + by) : event)
        }
    }

    override func remaining(key: String) -> Duration? { inner.remaining(key: key).map { $0 + by } }
}

/// Keeps a finished key in `activeKeys` and `activeCount` for two and a half ticks after its
/// finish was delivered.
final class ListsFinishedKeys: Forwarding, @unchecked Sendable {
    private let lingering = Locked<[String: UInt64]>([:])

    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        let linger = UInt64(inner.tickInterval.nanoseconds) * 5 / 2
        return { [lingering, weak self] event in
            if event.kind == .finished, let self { lingering.withLock { $0[key] = self.clockNow() + linger } }
            observer(event)
        }
    }

    private var stillListed: [String] {
        let now = clockNow()
        return lingering.withLock { $0.filter { $0.value > now }.map(\.key) }
    }

    override var activeKeys: [String] { Array(Set(inner.activeKeys + stillListed)) }
    override var activeCount: Int { activeKeys.count }
}

/// Keeps a key busy for about a tick after its finish: `start` answers `.attached` and starts
/// nothing.
final class BusyAfterFinish: Forwarding, @unchecked Sendable {
    private let busyUntil = Locked<[String: UInt64]>([:])

    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        let busy = UInt64(inner.tickInterval.nanoseconds)
        return { [busyUntil, weak self] event in
            if event.kind == .finished, let self { busyUntil.withLock { $0[key] = self.clockNow() + busy } }
            observer(event)
        }
    }

    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        if let until = busyUntil.withLock({ $0[key] }), until > clockNow() {
            return .attached(remaining: .zero)
        }
        return try super.start(key: key, duration: duration, observer: observer)
    }
}
