@testable import Countdown
import CountdownSupport
@testable import CountdownBenchKit
import CountdownConformance

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

/// A backend keeping a store with a broken promise (``StoreDefects``): the dispatch-source
/// backend whose store was made with `defects`. Each is aimed at the store check that must
/// reject it.
/// `@unchecked Sendable` as its base: it adds one immutable option set.
final class StoreWithDefects: Forwarding, KeyedCountdownScheduler, @unchecked Sendable {
    private let defects: StoreDefects

    init(_ inner: any KeyedCountdownScheduler, _ defects: StoreDefects) {
        self.defects = defects
        super.init(inner)
    }

    private var keyed: any KeyedCountdownScheduler { inner as! any KeyedCountdownScheduler }

    func restore(from store: CountdownStore) throws(CountdownStoreError) -> CountdownRestoration {
        try keyed.restore(from: CountdownStore(path: store.path, clocks: store.clocks, hooks: StoreHooks(defects: defects)))
    }

    func waitUntilStored() { keyed.waitUntilStored() }
}
