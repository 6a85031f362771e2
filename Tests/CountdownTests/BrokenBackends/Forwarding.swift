@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Synchronization
import Testing

// What every broken backend is built on: a forwarding scheduler over a real backend or the virtual one, and its twin in virtual time.

typealias Environment = CountdownConformance.Environment

func dispatchSource(_ e: Environment) throws -> DispatchSourceScheduler {
    try DispatchSourceScheduler(tickInterval: e.tickInterval, deliveryQueue: e.deliveryQueue)
}

/// Forwards to a backend built on the keyed table (the benchmark's `ForwardingScheduler`): a real
/// one, or the virtual scheduler; each broken backend below overrides one behaviour. What a
/// broken backend does "later" happens later on its inner scheduler's clock: in real time after
/// a real delay, in virtual time at the first `advance` that reaches it.
class Forwarding: ForwardingScheduler, @unchecked Sendable {
    private let pending = Locked<[(due: Duration, work: @Sendable () -> Void)]>([])

    private var virtual: VirtualScheduler? { inner as? VirtualScheduler }

    /// Nanoseconds on the inner scheduler's clock: monotonic, or virtual.
    func clockNow() -> UInt64 {
        virtual.map { UInt64($0.now.nanoseconds) } ?? SystemClocks.monotonic()
    }

    /// Runs `work` on the delivery queue once `delay` has passed on the inner scheduler's clock.
    func later(_ delay: Duration, _ work: @escaping @Sendable () -> Void) {
        guard let virtual else {
            deliveryQueue.asyncAfter(deadline: .now() + delay.dispatchInterval, execute: work)
            return
        }
        pending.withLock { $0.append((virtual.now + delay, work)) }
    }

    /// In virtual time, after each advance: runs on the delivery queue what has come due.
    func runDue() {
        guard let now = virtual?.now else { return }
        let due = pending.withLock { pending in
            let due = pending.filter { $0.due <= now }
            pending.removeAll { $0.due <= now }
            return due
        }
        for item in due { deliveryQueue.sync(execute: item.work) }
    }
}

/// A broken backend over the virtual scheduler, driving its clock: what the suite judges in
/// virtual time. `@unchecked Sendable` as its base: it adds only immutable references.
class InVirtualTime: ForwardingScheduler, VirtualTimeScheduling, @unchecked Sendable {
    let broken: any CountdownScheduler
    private let clock: VirtualScheduler

    override init(_ broken: any CountdownScheduler) {
        self.broken = broken
        // A broken backend forwards to the virtual scheduler, directly or through another.
        var inner: any CountdownScheduler = broken
        while let forwarding = inner as? ForwardingScheduler, !(inner is VirtualScheduler) { inner = forwarding.inner }
        clock = inner as! VirtualScheduler
        super.init(broken)
    }

    var now: Duration { clock.now }

    func advance(by duration: Duration) throws {
        try clock.advance(by: duration)
        (broken as? Forwarding)?.runDue()
    }
}

/// The same, for a broken store: its store's calls reach the broken backend, so that the store
/// checks judge it in virtual time. `@unchecked Sendable` as its base.
final class KeyedInVirtualTime: InVirtualTime, KeyedCountdownScheduler, @unchecked Sendable {
    private var keyed: any KeyedCountdownScheduler { broken as! any KeyedCountdownScheduler }

    func restore(from store: CountdownStore) throws(CountdownStoreError) -> CountdownRestoration {
        try keyed.restore(from: store)
    }

    func waitUntilStored() { keyed.waitUntilStored() }
}

/// What a broken backend is built on: the dispatch-source backend (real time) or the virtual
/// scheduler (virtual time), both on the keyed table.
struct Base: Sendable {
    let isVirtual: Bool

    func callAsFunction(_ e: Environment) throws -> any CountdownScheduler { try keyed(e) }

    /// The same, as one that keeps a store.
    func keyed(_ e: Environment) throws -> any KeyedCountdownScheduler {
        isVirtual ? try VirtualScheduler(tickInterval: e.tickInterval, deliveryQueue: e.deliveryQueue) : try dispatchSource(e)
    }

    /// Made with a delivery queue of its own instead of the one it was given.
    func offQueue(_ e: Environment) throws -> any CountdownScheduler {
        isVirtual ? try VirtualScheduler(tickInterval: e.tickInterval) : try DispatchSourceScheduler(tickInterval: e.tickInterval)
    }
}

/// Knows which keys the caller paused (and did not resume or cancel since): the base of the
/// broken backends whose bug is about paused countdowns.
class KnowsPaused: Forwarding, @unchecked Sendable {
    private let paused = Locked<Set<String>>([])

    func isPaused(_ key: String) -> Bool { paused.withLock { $0.contains(key) } }

    override func pause(key: String) -> Bool {
        let done = inner.pause(key: key)
        if done { paused.withLock { _ = $0.insert(key) } }
        return done
    }

    override func resume(key: String) -> Bool {
        paused.withLock { _ = $0.remove(key) }
        return inner.resume(key: key)
    }

    override func cancel(key: String) -> Bool {
        paused.withLock { _ = $0.remove(key) }
        return inner.cancel(key: key)
    }
}

/// A stream of the inner backend's events, passed through `relay` (which may drop, hold or
/// add), ending as the inner one does unless `relay` says otherwise.
func relayed(
    _ inner: AsyncStream<CountdownEvent>, endsWithInner: Bool = true,
    onConsumerGone: @escaping @Sendable () -> Void = {},
    relay: @escaping @Sendable (Int, CountdownEvent, AsyncStream<CountdownEvent>.Continuation) -> Void = { $2.yield($1) }
) -> AsyncStream<CountdownEvent> {
    AsyncStream { continuation in
        let task = Task.detached {
            var index = 0
            for await event in inner {
                relay(index, event, continuation)
                index += 1
            }
            if endsWithInner { continuation.finish() }
        }
        continuation.onTermination = { termination in
            task.cancel()
            if case .cancelled = termination { onConsumerGone() }
        }
    }
}
