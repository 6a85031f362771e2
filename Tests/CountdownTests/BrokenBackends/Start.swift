@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Synchronization
import Testing

// Aimed at `start` (the first tick at once) and `ticks` (remaining never rises).

/// Swallows the immediate first tick of a start.
final class NoImmediateTick: Forwarding, @unchecked Sendable {
    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        let first = Atomic<Bool>(true)
        return { event in
            if first.exchange(false, ordering: .relaxed) { return }
            observer(event)
        }
    }
}

/// A resume made before its countdown's first tick was delivered drops that tick: the observer
/// first hears the next one, a tick interval later. What a fleet member did when a pause and a
/// resume overtook the delivery of its first tick.
/// `@unchecked Sendable` as its base: its state is behind a lock.
final class ResumeDropsTheFirstTick: Forwarding, @unchecked Sendable {
    private struct Key { var heard = false; var dropNext = false }
    private let keys = Locked<[String: Key]>([:])

    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        keys.withLock { $0[key] = Key() }
        return { [keys] event in
            let drop = keys.withLock { keys -> Bool in
                defer { keys[key]?.heard = true; keys[key]?.dropNext = false }
                return keys[key].map { !$0.heard && $0.dropNext } ?? false
            }
            if !drop { observer(event) }
        }
    }

    override func resume(key: String) -> Bool {
        keys.withLock { if $0[key]?.heard == false { $0[key]?.dropNext = true } }
        return inner.resume(key: key)
    }
}

final class RemainingRises: Forwarding, @unchecked Sendable {
    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        let count = Atomic<Int64>(0)
        return { event in
            guard event.kind == .tick else { return observer(event) }
            let n = count.add(1, ordering: .relaxed).newValue
            observer(CountdownEvent(key: event.key, kind: .tick, remaining: event.remaining + .milliseconds(n * 40)))
        }
    }
}
