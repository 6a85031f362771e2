import Dispatch

/// What every built-in backend shares: the ``CountdownScheduler`` members, answered by one
/// keyed table, so that a backend's own type holds only its timing mechanism and its options.
///
/// Not open: only the package's backends derive from it. A backend of your own conforms to
/// ``CountdownScheduler`` directly.
///
/// `@unchecked Sendable` only because a class that is not final cannot be checked: every stored
/// property of this class and of its subclasses is an immutable `let` of a `Sendable` type.
public class KeyedCountdownScheduler: CountdownScheduler, @unchecked Sendable {
    public let profile: CountdownProfile
    private let table: KeyedTable

    init<Mechanism>(profile: CountdownProfile, table: KeyedCountdowns<Mechanism>) {
        self.profile = profile
        self.table = KeyedTable(table)
    }

    deinit { table.shutdown() }

    public var tickInterval: Duration { table.settings.tickInterval }
    public var deliveryQueue: DispatchQueue { table.settings.deliveryQueue }

    @discardableResult
    public func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        try table.start(key, duration, observer)
    }

    @discardableResult
    public func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        table.attach(key, observer)
    }

    public func events(key: String) -> AsyncStream<CountdownEvent> { table.events(key) }
    @discardableResult public func cancel(key: String) -> Bool { table.cancel(key) }
    @discardableResult public func pause(key: String) -> Bool { table.pause(key) }
    @discardableResult public func resume(key: String) -> Bool { table.resume(key) }
    public func remaining(key: String) -> Duration? { table.remaining(key) }
    public var activeKeys: [String] { table.activeKeys() }
    public var activeCount: Int { table.activeCount() }
    public func enteredBackground() { table.enteredBackground() }
    public func enteredForeground() { table.enteredForeground() }
    public func shutdown() { table.shutdown() }

    /// Restores every countdown `store` keeps, and from then on writes each change of this
    /// scheduler's countdowns to it: call it once, at launch, before starting any. Returns once
    /// the file holds what was restored (the expired countdowns gone from it).
    ///
    /// A running countdown comes back with the time left until its deadline, decided by the
    /// boot clock when the process was relaunched within the same boot, by the wall clock after
    /// a reboot; a paused one comes back paused. A restored countdown runs with no observer
    /// until a screen attaches to it by its key (``attach(key:observer:)``, or `start` with its
    /// key); one whose deadline passed while the process was not running is reported in
    /// ``CountdownRestoration/expired`` and not restored. A key that already has a countdown
    /// keeps it (``CountdownRestoration/kept``).
    ///
    /// From then on every start, cancel, pause, resume and finish is written in the background:
    /// the call returns at once, and the file holds the change within one write (a finish is
    /// delivered only once the file no longer holds its countdown, the delivery queue free
    /// meanwhile). ``enteredBackground()``, ``waitUntilStored()`` and ``shutdown()`` return once
    /// the file holds every change made before them. ``shutdown()`` leaves the store as it was,
    /// so that the countdowns come back at the next launch; ``cancel(key:)`` removes one.
    ///
    /// - Throws: ``CountdownStoreError`` when the file cannot be read, is corrupt, truncated or
    ///   from a newer version, when a stored countdown is refused (above the maximum duration,
    ///   beyond the capacity), or when the store or this scheduler is already attached. Then
    ///   nothing is restored, nothing is attached, and the file is left untouched.
    @discardableResult
    public func restore(from store: CountdownStore) throws(CountdownStoreError) -> CountdownRestoration {
        try table.restore(store)
    }

    /// Returns once the store given to ``restore(from:)`` holds every change made before the
    /// call; at once without a store. ``enteredBackground()`` and ``shutdown()`` wait the same
    /// way; call it where the process may end without them (a command-line tool about to exit).
    public func waitUntilStored() { table.waitUntilStored() }

    /// What the scheduler still holds of the observer of `key`'s countdown. For tests.
    func observerSlot(key: String) -> ObserverSlot? { table.observerSlot(key) }
}

/// ``KeyedCountdowns`` whatever its mechanism, as ``KeyedCountdownScheduler`` calls it: closures
/// made where the mechanism is known, so that each backend runs its own specialized table (a
/// protocol existential over the generic table would run the unspecialized one, which looks up
/// generic metadata on every call).
struct KeyedTable: Sendable {
    let settings: SchedulerSettings
    let start: @Sendable (String, Duration, @escaping CountdownObserver) throws(CountdownError) -> CountdownStart
    let attach: @Sendable (String, @escaping CountdownObserver) -> Duration?
    let events: @Sendable (String) -> AsyncStream<CountdownEvent>
    let cancel: @Sendable (String) -> Bool
    let pause: @Sendable (String) -> Bool
    let resume: @Sendable (String) -> Bool
    let remaining: @Sendable (String) -> Duration?
    let observerSlot: @Sendable (String) -> ObserverSlot?
    let activeKeys: @Sendable () -> [String]
    let activeCount: @Sendable () -> Int
    let enteredBackground: @Sendable () -> Void
    let enteredForeground: @Sendable () -> Void
    let restore: @Sendable (CountdownStore) throws(CountdownStoreError) -> CountdownRestoration
    let waitUntilStored: @Sendable () -> Void
    let shutdown: @Sendable () -> Void

    init<Mechanism>(_ table: KeyedCountdowns<Mechanism>) {
        settings = table.settings
        start = { (key, duration, observer) throws(CountdownError) in
            try table.start(key: key, duration: duration, observer: observer)
        }
        attach = { table.attach(key: $0, observer: $1) }
        events = { table.events(key: $0) }
        cancel = { table.cancel(key: $0) }
        pause = { table.pause(key: $0) }
        resume = { table.resume(key: $0) }
        remaining = { table.remaining(key: $0) }
        observerSlot = { table.observerSlot(key: $0) }
        activeKeys = { table.activeKeys }
        activeCount = { table.activeCount }
        enteredBackground = { table.enteredBackground() }
        enteredForeground = { table.enteredForeground() }
        restore = { (store) throws(CountdownStoreError) in try table.restore(from: store) }
        waitUntilStored = { table.waitUntilStored() }
        shutdown = { table.shutdown() }
    }
}
