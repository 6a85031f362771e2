@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Synchronization
import Testing

// Aimed at every check that attaches or finishes: the contract's "on the delivery queue, one at
// a time" is judged for every callback of every check, not only in `delivery`.

/// `attach(key:)` tells its first tick on the caller's thread before it returns (a shortcut a
/// backend takes to spare a hop), off the delivery queue and overlapping whatever runs there.
/// The tick the inner scheduler queued for it is dropped: it was told already.
final class AttachTellsFirstTickInline: Forwarding, @unchecked Sendable {
    override func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        let told = Atomic<Bool>(false)
        let forwarded: CountdownObserver = { event in
            if event.kind == .tick, !told.exchange(true, ordering: .relaxed) { return }
            observer(event)
        }
        guard let remaining = inner.attach(key: key, observer: forwarded) else { return nil }
        if !told.exchange(true, ordering: .relaxed), remaining > .zero {
            observer(CountdownEvent(key: key, kind: .tick, remaining: remaining))
        }
        return remaining
    }
}

/// Runs each finish on a queue of its own, the delivery queue waiting for it: the order and
/// the one-at-a-time are kept, only the queue is wrong (a finish hopped to a completion queue).
final class FinishesOnAnotherQueue: Forwarding, @unchecked Sendable {
    private let elsewhere = DispatchQueue(label: "broken.finishes-elsewhere")

    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        { [elsewhere] event in
            guard event.kind == .finished else { return observer(event) }
            elsewhere.sync { observer(event) }
        }
    }
}
