@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Synchronization
import Testing

// Aimed at the fleet's checks, the store's and the profile's.

/// Declares that schedulers made on one namespace share their countdowns (a fleet), and keeps
/// each scheduler's to itself: a second server would open a rate-limit window of its own.
final class SharesNothing: Forwarding, @unchecked Sendable {
    override var profile: CountdownProfile {
        var declared = inner.profile
        declared.sharing = .fleet
        return declared
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

/// Restores each running countdown `early` before its deadline: a relaunch reads the file on a
/// clock that fast (the first launch, which finds no file, runs on the true one), as a store
/// that mixed up its clocks, or rounded a deadline down, would.
/// `@unchecked Sendable` as its base: it adds one constant.
final class RestoresEarly: Forwarding, KeyedCountdownScheduler, @unchecked Sendable {
    private let early: Int64

    init(_ inner: any KeyedCountdownScheduler, by early: Duration) {
        self.early = early.nanoseconds
        super.init(inner)
    }

    private var keyed: any KeyedCountdownScheduler { inner as! any KeyedCountdownScheduler }

    func restore(from store: CountdownStore) throws(CountdownStoreError) -> CountdownRestoration {
        guard FileManager.default.fileExists(atPath: store.path) else { return try keyed.restore(from: store) }
        let (true_, early) = (store.clocks, early)
        let fast = StoreClocks(wall: { true_.wall() + early }, boot: { true_.boot() + early }, bootID: true_.bootID)
        return try keyed.restore(from: CountdownStore(path: store.path, clocks: fast))
    }

    func waitUntilStored() { keyed.waitUntilStored() }
}

/// Declares the articles' capacity of 20, then "starts" the 21st without running it.
final class DropsOverflow: Forwarding, @unchecked Sendable {
    override var profile: CountdownProfile {
        var profile = inner.profile
        profile.capacity = 20
        return profile
    }

    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        if inner.activeCount >= 20, inner.remaining(key: key) == nil { return .started }
        return try inner.start(key: key, duration: duration, observer: observer)
    }
}

/// Declares a profile its mechanism does not have.
final class MisdeclaredProfile: Forwarding, @unchecked Sendable {
    private let declared: CountdownProfile

    init(_ inner: any CountdownScheduler, _ change: (inout CountdownProfile) -> Void) {
        var profile = inner.profile
        change(&profile)
        declared = profile
        super.init(inner)
    }

    override var profile: CountdownProfile { declared }
}

/// Counts ticks with timers whose handlers run on the delivery queue: an observer that blocks
/// the queue stops every countdown's counting, and they finish late — while declaring that a
/// slow observer only delays delivery.
final class TimersOnDeliveryQueue: CountdownScheduler {
    private let table: CountdownEngine<DispatchSourceMechanism>
    let profile: CountdownProfile

    init(_ e: Environment) throws {
        let settings = try SchedulerSettings(
            tickInterval: e.tickInterval, maximumDuration: .seconds(3600), capacity: nil,
            deliveryQueue: e.deliveryQueue, label: "broken")
        table = CountdownEngine(
            settings: settings, mechanism: DispatchSourceMechanism(tick: e.tickInterval, timerQueue: e.deliveryQueue, compensatesMissedTicks: false))
        profile = try DispatchSourceScheduler(tickInterval: e.tickInterval).profile
    }

    var tickInterval: Duration { table.settings.tickInterval }
    var deliveryQueue: DispatchQueue { table.settings.deliveryQueue }
    func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        try table.start(key: key, duration: duration, observer: observer)
    }
    func attach(key: String, observer: @escaping CountdownObserver) -> Duration? { table.attach(key: key, observer: observer) }
    func events(key: String) -> AsyncStream<CountdownEvent> { table.events(key: key) }
    func cancel(key: String) -> Bool { table.cancel(key: key) }
    func pause(key: String) -> Bool { table.pause(key: key) }
    func resume(key: String) -> Bool { table.resume(key: key) }
    func remaining(key: String) -> Duration? { table.remaining(key: key) }
    var activeKeys: [String] { table.activeKeys }
    var activeCount: Int { table.activeCount }
    func enteredBackground() { table.enteredBackground() }
    func enteredForeground() { table.enteredForeground() }
    func shutdown() { table.shutdown() }
}
