@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Synchronization
import Testing

// Aimed at `counts`, `randomized` and `replay`.

/// `activeCount` leaves out paused countdowns.
final class CountsOnlyRunning: KnowsPaused, @unchecked Sendable {
    override var activeCount: Int {
        inner.activeKeys.filter { !isPaused($0) }.count
    }
}

/// `activeKeys` lists a key once more for every attach to it.
final class ListsAttachesAgain: Forwarding, @unchecked Sendable {
    private let attaches = Locked<[String]>([])

    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        let outcome = try inner.start(key: key, duration: duration, observer: observer)
        if case .attached = outcome { attaches.withLock { $0.append(key) } }
        return outcome
    }

    override var activeKeys: [String] {
        let live = inner.activeKeys
        return live + attaches.withLock { $0 }.filter(live.contains)
    }
}

/// A key cancelled while paused comes back paused when it is started again: its new countdown
/// never ticks and never finishes. No single-purpose check restarts a key cancelled while
/// paused; the randomized check's model catches it.
final class RestartsPausedAfterCancel: KnowsPaused, @unchecked Sendable {
    private let cancelledWhilePaused = Locked<Set<String>>([])

    override func cancel(key: String) -> Bool {
        if isPaused(key) { cancelledWhilePaused.withLock { _ = $0.insert(key) } }
        return super.cancel(key: key)
    }

    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        let outcome = try super.start(key: key, duration: duration, observer: observer)
        if outcome == .started, cancelledWhilePaused.withLock({ $0.remove(key) != nil }) {
            _ = inner.pause(key: key)
        }
        return outcome
    }
}

/// Drops ticks at random, with a seed of its own each time it is made: two runs of the same
/// calls hear different events. Aimed at the replay check, which only virtual time can judge.
final class DropsTicksAtRandom: Forwarding, @unchecked Sendable {
    private let random = Locked(SystemRandomNumberGenerator())

    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        let isFirst = Atomic<Bool>(true)
        return { [random] event in
            let first = isFirst.exchange(false, ordering: .relaxed)
            if !first, event.kind == .tick, random.withLock({ $0.next() % 4 == 0 }) { return }
            observer(event)
        }
    }
}
