@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Synchronization
import Testing

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

// MARK: - One broken promise each

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

/// Cancels, then lets one more tick through a little later.
final class TicksAfterCancel: Forwarding, @unchecked Sendable {
    private let observers = Locked<[String: CountdownObserver]>([:])

    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        observers.withLock { $0[key] = observer }
        return observer
    }

    override func cancel(key: String) -> Bool {
        let remaining = inner.remaining(key: key)
        let cancelled = inner.cancel(key: key)
        if cancelled, let observer = observers.withLock({ $0[key] }), let remaining {
            later(.milliseconds(30)) { observer(CountdownEvent(key: key, kind: .tick, remaining: remaining)) }
        }
        return cancelled
    }
}

final class KeepsObservers: Forwarding, @unchecked Sendable {
    private let kept = Locked<[CountdownObserver]>([])

    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        kept.withLock { $0.append(observer) }
        return observer
    }
}

final class RestartsOnAttach: Forwarding, @unchecked Sendable {
    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        _ = inner.cancel(key: key)
        return try inner.start(key: key, duration: duration, observer: observer)
    }
}

/// Says it paused; never does.
final class IgnoresPause: Forwarding, @unchecked Sendable {
    private let paused = Locked<Set<String>>([])

    override func pause(key: String) -> Bool {
        guard inner.remaining(key: key) != nil else { return false }
        return paused.withLock { $0.insert(key).inserted }
    }

    override func resume(key: String) -> Bool {
        paused.withLock { $0.remove(key) != nil }
    }
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

/// Made with a queue of its own instead of the one it was given.
final class DeliversOffQueue: Forwarding, @unchecked Sendable {}

/// Starts a thread that never ends.
final class LeaksThread: Forwarding, @unchecked Sendable {
    override init(_ inner: any CountdownScheduler) {
        super.init(inner)
        let thread = Thread {
            nameCurrentThread("leaky-ticker")
            // Bounded, so the test process is not kept busy for ever: long past the check's wait.
            for _ in 0..<600 { Thread.sleep(forTimeInterval: 0.1) }
        }
        thread.start()
    }
}

final class AcceptsEmptyKey: Forwarding, @unchecked Sendable {
    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        try inner.start(key: key.isEmpty ? "(empty)" : key, duration: duration, observer: observer)
    }
}

/// Declares that schedulers made on one namespace share their countdowns (a fleet), and keeps
/// each scheduler's to itself: a second server would open a rate-limit window of its own.
final class SharesNothing: Forwarding, @unchecked Sendable {
    override var profile: CountdownProfile {
        var declared = inner.profile
        declared.sharing = .fleet
        return declared
    }
}

/// `attach(key:)` with nothing running starts a minute-long countdown.
final class AttachStarts: Forwarding, @unchecked Sendable {
    override func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        if let remaining = inner.attach(key: key, observer: observer) { return remaining }
        _ = try? inner.start(key: key, duration: .seconds(60), observer: observer)
        return .seconds(60)
    }
}

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

/// Attaching to a paused countdown quietly resumes it.
final class AttachResumes: Forwarding, @unchecked Sendable {
    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        _ = inner.resume(key: key)
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

/// Answers `.started` for a key with any non-ASCII character, and never runs it.
final class IgnoresNonASCIIKeys: Forwarding, @unchecked Sendable {
    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        if !key.unicodeScalars.allSatisfy(\.isASCII) { return .started }
        return try inner.start(key: key, duration: duration, observer: observer)
    }
}

/// Keys its countdowns by a key's Unicode scalars, not by the String: "é" precomposed and
/// decomposed become two countdowns.
final class ComparesKeysByScalars: Forwarding, @unchecked Sendable {
    private let originals = Locked<[String: String]>([:])

    private func inner(_ key: String) -> String {
        let mangled = key.unicodeScalars.map { String($0.value, radix: 16) }.joined(separator: ".")
        originals.withLock { $0[mangled] = key }
        return mangled
    }

    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        guard !key.isEmpty else { throw .emptyKey }
        return try inner.start(key: inner(key), duration: duration) { event in
            observer(CountdownEvent(key: key, kind: event.kind, remaining: event.remaining))
        }
    }

    override func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        inner.attach(key: inner(key)) { observer(CountdownEvent(key: key, kind: $0.kind, remaining: $0.remaining)) }
    }

    override func cancel(key: String) -> Bool { inner.cancel(key: inner(key)) }
    override func pause(key: String) -> Bool { inner.pause(key: inner(key)) }
    override func resume(key: String) -> Bool { inner.resume(key: inner(key)) }
    override func remaining(key: String) -> Duration? { inner.remaining(key: inner(key)) }
    override var activeKeys: [String] {
        let keys = inner.activeKeys
        return originals.withLock { originals in keys.map { originals[$0] ?? $0 } }
    }
}

/// Treats a key as a C string: everything after a NUL is lost, so "sms\0one" and "sms\0two"
/// are one countdown.
final class TruncatesKeysAtNUL: Forwarding, @unchecked Sendable {
    private func truncated(_ key: String) -> String {
        let prefix = key.prefix { $0 != "\0" }
        return prefix.isEmpty ? key : String(prefix)
    }

    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        try inner.start(key: truncated(key), duration: duration, observer: observer)
    }
    override func cancel(key: String) -> Bool { inner.cancel(key: truncated(key)) }
    override func remaining(key: String) -> Duration? { inner.remaining(key: truncated(key)) }
}

/// Refuses exactly the maximum duration (an off-by-one: `>=` where `>` was meant).
final class RefusesTheMaximum: Forwarding, @unchecked Sendable {
    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        let maximum = inner.profile.maximumDuration
        if duration >= maximum { throw .durationAboveMaximum(duration, maximum: maximum) }
        return try inner.start(key: key, duration: duration, observer: observer)
    }
}

/// Answers `.started` for a countdown shorter than a tick, and never runs it.
final class DropsSubTickDurations: Forwarding, @unchecked Sendable {
    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        if duration > .zero && duration < inner.tickInterval { return .started }
        return try inner.start(key: key, duration: duration, observer: observer)
    }
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

/// `attach(key:)` quietly resumes a paused countdown.
final class AttachOnlyResumes: Forwarding, @unchecked Sendable {
    override func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        _ = inner.resume(key: key)
        return inner.attach(key: key, observer: observer)
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

/// Its thread ends on `shutdown()`, but not when the scheduler is only released.
final class ThreadOutlivesRelease: Forwarding, @unchecked Sendable {
    /// The thread holds only this flag, not the scheduler, so the scheduler itself does go away.
    private final class Flag: Sendable {
        let stopped = Atomic<Bool>(false)
    }
    private let flag = Flag()

    override init(_ inner: any CountdownScheduler) {
        super.init(inner)
        let flag = flag
        let thread = Thread {
            nameCurrentThread("outlives-release")
            // Bounded, so the test process is not kept busy for ever.
            for _ in 0..<600 where !flag.stopped.load(ordering: .relaxed) { Thread.sleep(forTimeInterval: 0.05) }
        }
        thread.start()
    }

    override func shutdown() {
        flag.stopped.store(true, ordering: .relaxed)
        super.shutdown()
    }
}

/// A stream of the inner backend's events, passed through `relay` (which may drop, hold or
/// add), ending as the inner one does unless `relay` says otherwise.
private func relayed(
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

/// The stream never ends: not after the finish, not after a cancel.
final class EventsNeverEnd: Forwarding, @unchecked Sendable {
    override func events(key: String) -> AsyncStream<CountdownEvent> {
        relayed(inner.events(key: key), endsWithInner: false)
    }
}

/// A consumer that stops iterating cancels the countdown it watched.
final class EventsCancelWhenConsumerGoes: Forwarding, @unchecked Sendable {
    override func events(key: String) -> AsyncStream<CountdownEvent> {
        let inner = self.inner
        return relayed(inner.events(key: key), onConsumerGone: { _ = inner.cancel(key: key) })
    }
}

/// The stream leaves out the remaining time it attached with.
final class EventsSkipTheAttachTick: Forwarding, @unchecked Sendable {
    override func events(key: String) -> AsyncStream<CountdownEvent> {
        relayed(inner.events(key: key), relay: { index, event, continuation in
            if index > 0 { continuation.yield(event) }
        })
    }
}

/// The app's foreground loses every countdown.
final class ForegroundCancels: Forwarding, @unchecked Sendable {
    override func enteredForeground() {
        for key in inner.activeKeys { _ = inner.cancel(key: key) }
    }
}

/// The app's foreground resumes the countdowns the user paused.
final class ForegroundResumesPaused: Forwarding, @unchecked Sendable {
    override func enteredForeground() {
        inner.enteredForeground()
        for key in inner.activeKeys { _ = inner.resume(key: key) }
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

// MARK: - What the suite let through once (issue: distinct keys, counts, one key, observers)

/// Takes keys that are different strings for one, by folding each before it reaches the real
/// backend; events carry the folded key back, as such a backend would.
final class MergesKeys: Forwarding, @unchecked Sendable {
    private let fold: @Sendable (String) -> String

    init(_ inner: any CountdownScheduler, fold: @escaping @Sendable (String) -> String) {
        self.fold = fold
        super.init(inner)
    }

    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        try inner.start(key: fold(key), duration: duration, observer: observer)
    }

    override func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        inner.attach(key: fold(key), observer: observer)
    }

    override func cancel(key: String) -> Bool { inner.cancel(key: fold(key)) }
    override func pause(key: String) -> Bool { inner.pause(key: fold(key)) }
    override func resume(key: String) -> Bool { inner.resume(key: fold(key)) }
    override func remaining(key: String) -> Duration? { inner.remaining(key: fold(key)) }

    static let caseInsensitive: @Sendable (String) -> String = { $0.lowercased() }
    static let trimmed: @Sendable (String) -> String = { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    static let first255Bytes: @Sendable (String) -> String = { String(decoding: $0.utf8.prefix(255), as: UTF8.self) }
    /// Emoji modifiers (skin tones) and variation selectors dropped.
    static let withoutModifiers: @Sendable (String) -> String = { key in
        var scalars = String.UnicodeScalarView()
        for scalar in key.unicodeScalars
        where !(0x1F3FB...0x1F3FF).contains(scalar.value) && !(0xFE00...0xFE0F).contains(scalar.value) {
            scalars.append(scalar)
        }
        return String(scalars)
    }
    static let compatibilityFolded: @Sendable (String) -> String = { $0.precomposedStringWithCompatibilityMapping }
}

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

// MARK: - The catalogue

/// A broken backend and the check that must reject it.
struct BrokenBackend: Sendable, CustomTestStringConvertible {
    let name: String
    let rejectedBy: String
    /// Builds it on a base: real or virtual.
    let build: @Sendable (Environment, Base) throws -> any CountdownScheduler
    /// Whether it is built on the keyed table through `Base`, so that it has a virtual-time
    /// twin (those aimed at a profile check need the real world, and are judged in real time).
    let inVirtualTime: Bool
    /// Whether its check can judge it in real time (replay cannot: real clocks never repeat).
    let inRealTime: Bool

    init(name: String, rejectedBy: String, inVirtualTime: Bool = true, inRealTime: Bool = true,
         build: @escaping @Sendable (Environment, Base) throws -> any CountdownScheduler) {
        self.name = name
        self.rejectedBy = rejectedBy
        self.inVirtualTime = inVirtualTime
        self.inRealTime = inRealTime
        self.build = build
    }

    /// On the dispatch-source backend, in real time.
    var make: CountdownConformance.Factory { { e in try build(e, Base(isVirtual: false)) } }

    /// On the virtual scheduler, driving its clock; nil when it has no virtual twin.
    var makeInVirtualTime: CountdownConformance.Factory? {
        guard inVirtualTime else { return nil }
        return { e in
            let broken = try build(e, Base(isVirtual: true))
            return broken is any KeyedCountdownScheduler ? KeyedInVirtualTime(broken) : InVirtualTime(broken)
        }
    }

    var testDescription: String { "\(name) → \(rejectedBy)" }

    static let all: [BrokenBackend] = [
        .init(name: "no immediate tick", rejectedBy: "start") { NoImmediateTick(try $1($0)) },
        .init(name: "a store: the finish delivered before its write", rejectedBy: "store.finish") { e, base in
            StoreWithDefects(try base.keyed(e), .finishesBeforeWrite)
        },
        .init(name: "a store: paused countdowns left out of the file", rejectedBy: "store.restore") { e, base in
            StoreWithDefects(try base.keyed(e), .forgetsPaused)
        },
        .init(name: "a store: expired countdowns left in the file", rejectedBy: "store.restore") { e, base in
            StoreWithDefects(try base.keyed(e), .keepsWhatItRead)
        },
        .init(name: "a store: waitUntilStored() returns before the write", rejectedBy: "store.wait") { e, base in
            StoreWithDefects(try base.keyed(e), .waitReturnsEarly)
        },
        .init(name: "a store: a bad file read as an empty store", rejectedBy: "store.bad-file") { e, base in
            StoreWithDefects(try base.keyed(e), .readsBadFilesAsEmpty)
        },
        .init(name: "a resume before the first tick is delivered drops it", rejectedBy: "start") { ResumeDropsTheFirstTick(try $1($0)) },
        .init(name: "remaining rises", rejectedBy: "ticks") { RemainingRises(try $1($0)) },
        .init(name: "finishes twice", rejectedBy: "finish") { FinishesTwice(try $1($0)) },
        .init(name: "finishes early", rejectedBy: "finish") { FinishesEarly(try $1($0)) },
        // Virtual time reads exactly: a millisecond early is early. (In real time a millisecond
        // is within reach of a late wake-up; the next one is judged there.)
        .init(name: "finishes 1 ms early", rejectedBy: "finish", inRealTime: false) { FinishesSlightlyEarly(try $1($0), by: .milliseconds(1)) },
        .init(name: "declares a 2 ms tolerance and finishes 0.8 ms early", rejectedBy: "finish", inVirtualTime: false) { e, _ in
            // Its timers wake on time, 0.8 ms before the deadline: a backend that read its
            // tolerance as "up to this early" (a timer with a 2 ms tolerance wakes up to 2 ms late).
            FinishesSlightlyEarly(try TimestampScheduler(
                tickInterval: e.tickInterval, clock: .continuous, deliveryQueue: e.deliveryQueue), by: .microseconds(800), declaring: .milliseconds(2))
        },
        .init(name: "restarts on attach", rejectedBy: "attach") { RestartsOnAttach(try $1($0)) },
        .init(name: "attach(key:) starts", rejectedBy: "attach-only") { AttachStarts(try $1($0)) },
        .init(name: "ticks after cancel", rejectedBy: "cancel") { TicksAfterCancel(try $1($0)) },
        .init(name: "ignores pause", rejectedBy: "pause-resume") { IgnoresPause(try $1($0)) },
        .init(name: "accepts an empty key", rejectedBy: "bad-input") { AcceptsEmptyKey(try $1($0)) },
        // A fleet's checks need two schedulers sharing one store: in real time only.
        .init(name: "a fleet that shares nothing (starts)", rejectedBy: "fleet.one-key", inVirtualTime: false) { SharesNothing(try $1($0)) },
        .init(name: "a fleet that shares nothing (cancels)", rejectedBy: "fleet.cancel", inVirtualTime: false) { SharesNothing(try $1($0)) },
        .init(name: "a fleet that shares nothing (attaches)", rejectedBy: "fleet.attach", inVirtualTime: false) { SharesNothing(try $1($0)) },
        .init(name: "deadlocks on a re-entrant cancel", rejectedBy: "reentrancy") {
            DeadlocksOnReentrantCancel(try $1($0))
        },
        .init(name: "races concurrent starts", rejectedBy: "concurrency") { RacesConcurrentStarts(try $1($0)) },
        .init(name: "delivers off the queue", rejectedBy: "delivery") {
            DeliversOffQueue(try $1.offQueue($0))
        },
        .init(name: "keeps observers", rejectedBy: "observer-release") { KeepsObservers(try $1($0)) },
        .init(name: "leaks a thread", rejectedBy: "shutdown") { LeaksThread(try $1($0)) },
        .init(name: "start on a paused key resumes it", rejectedBy: "attach") { AttachResumes(try $1($0)) },
        .init(name: "attach(key:) resumes a paused countdown", rejectedBy: "attach-only") { AttachOnlyResumes(try $1($0)) },
        .init(name: "never runs a non-ASCII key", rejectedBy: "keys") { IgnoresNonASCIIKeys(try $1($0)) },
        .init(name: "compares keys by Unicode scalars", rejectedBy: "keys") { ComparesKeysByScalars(try $1($0)) },
        .init(name: "truncates keys at a NUL", rejectedBy: "keys") { TruncatesKeysAtNUL(try $1($0)) },
        .init(name: "refuses exactly the maximum duration", rejectedBy: "edges") { RefusesTheMaximum(try $1($0)) },
        .init(name: "never runs a countdown shorter than a tick", rejectedBy: "edges") { DropsSubTickDurations(try $1($0)) },
        .init(name: "lists a finished key for 2.5 ticks", rejectedBy: "finish") { ListsFinishedKeys(try $1($0)) },
        .init(name: "keeps a key busy for a tick after its finish", rejectedBy: "finish") { BusyAfterFinish(try $1($0)) },
        .init(name: "its thread outlives a release without shutdown", rejectedBy: "release") { ThreadOutlivesRelease(try $1($0)) },
        .init(name: "a key cancelled while paused restarts paused", rejectedBy: "randomized") { RestartsPausedAfterCancel(try $1($0)) },
        .init(name: "events(key:) never ends", rejectedBy: "events") { EventsNeverEnd(try $1($0)) },
        .init(name: "a consumer that stops cancels the countdown", rejectedBy: "events") {
            EventsCancelWhenConsumerGoes(try $1($0))
        },
        .init(name: "events(key:) leaves out the attach tick", rejectedBy: "events") { EventsSkipTheAttachTick(try $1($0)) },
        .init(name: "the foreground cancels every countdown", rejectedBy: "lifecycle") { ForegroundCancels(try $1($0)) },
        .init(name: "the foreground resumes paused countdowns", rejectedBy: "lifecycle") { ForegroundResumesPaused(try $1($0)) },
        .init(name: "merges keys that differ in letter case", rejectedBy: "distinct-keys") {
            MergesKeys(try $1($0), fold: MergesKeys.caseInsensitive)
        },
        .init(name: "merges keys that differ in leading or trailing whitespace", rejectedBy: "distinct-keys") {
            MergesKeys(try $1($0), fold: MergesKeys.trimmed)
        },
        .init(name: "merges keys that share their first 255 bytes", rejectedBy: "distinct-keys") {
            MergesKeys(try $1($0), fold: MergesKeys.first255Bytes)
        },
        .init(name: "merges emoji with and without modifiers or variation selectors", rejectedBy: "distinct-keys") {
            MergesKeys(try $1($0), fold: MergesKeys.withoutModifiers)
        },
        .init(name: "merges keys equal after NFKC folding", rejectedBy: "distinct-keys") {
            MergesKeys(try $1($0), fold: MergesKeys.compatibilityFolded)
        },
        .init(name: "activeCount leaves out paused countdowns", rejectedBy: "counts") { CountsOnlyRunning(try $1($0)) },
        .init(name: "activeKeys lists a key once more per attach", rejectedBy: "counts") { ListsAttachesAgain(try $1($0)) },
        .init(name: "two threads starting one key both get .started", rejectedBy: "one-key") { ChecksThenStarts(try $1($0)) },
        .init(name: "two threads cancelling one key both get true", rejectedBy: "one-key") { ChecksThenCancels(try $1($0)) },
        .init(name: "a cancel from inside its observer, then one more tick", rejectedBy: "calls-from-observer") {
            TicksAfterCallFromObserver(try $1($0), call: .cancel)
        },
        .init(name: "a pause from inside its observer, then one more tick", rejectedBy: "calls-from-observer") {
            TicksAfterCallFromObserver(try $1($0), call: .pause)
        },
        .init(name: "a replacing start from inside its observer, then one more tick to the old observer", rejectedBy: "calls-from-observer") {
            TicksAfterCallFromObserver(try $1($0), call: .replace)
        },
        .init(name: "drops ticks at random: no run repeats", rejectedBy: "replay", inRealTime: false) { DropsTicksAtRandom(try $1($0)) },
        .init(name: "drops the overflow silently", rejectedBy: "profile.capacity", inVirtualTime: false) { DropsOverflow(try $1($0)) },
        .init(name: "timestamp(wall) declared immune to the wall clock", rejectedBy: "profile.wall-clock", inVirtualTime: false) { e, _ in
            MisdeclaredProfile(try TimestampScheduler(
                tickInterval: e.tickInterval, clock: e.wallClock, deliveryQueue: e.deliveryQueue)) { $0.wallClockJump = .immune }
        },
        .init(name: "timers on the delivery queue: a slow observer stalls every countdown", rejectedBy: "profile.slow-observer", inVirtualTime: false) { e, _ in
            try TimersOnDeliveryQueue(e)
        },
        .init(name: "dispatch-source declared stalling behind a slow observer", rejectedBy: "profile.slow-observer", inVirtualTime: false) {
            MisdeclaredProfile(try $1($0)) { $0.slowObserver = .stallsCountdowns }
        },
        .init(name: "dispatch-source declared drifting", rejectedBy: "profile.drift", inVirtualTime: false) {
            MisdeclaredProfile(try $1($0)) { $0.drift = .accumulates }
        },
        .init(name: "operation-queue declared drift-free", rejectedBy: "profile.drift", inVirtualTime: false) { e, _ in
            MisdeclaredProfile(try OperationQueueScheduler(tickInterval: e.tickInterval, deliveryQueue: e.deliveryQueue)) {
                $0.drift = .bounded
            }
        },
    ]
}
