import Dispatch

/// A backend that is its engine with a profile: every member of ``KeyedCountdownScheduler`` is
/// answered here, once, by the backend's own specialized ``CountdownEngine`` (each backend's
/// conformance is compiled for its concrete mechanism: no closures, no existential, no
/// generic metadata looked up on a call). A backend adds its options, its profile and a
/// `deinit` that shuts the engine down.
protocol EngineBacked: KeyedCountdownScheduler {
    associatedtype Mechanism: CountdownMechanism
    var engine: CountdownEngine<Mechanism> { get }
}

extension EngineBacked {
    public var tickInterval: Duration { engine.settings.tickInterval }
    public var deliveryQueue: DispatchQueue { engine.settings.deliveryQueue }

    @discardableResult
    public func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        try engine.start(key: key, duration: duration, observer: observer)
    }

    @discardableResult
    public func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        engine.attach(key: key, observer: observer)
    }

    public func events(key: String) -> AsyncStream<CountdownEvent> { engine.events(key: key) }
    @discardableResult public func cancel(key: String) -> Bool { engine.cancel(key: key) }
    @discardableResult public func pause(key: String) -> Bool { engine.pause(key: key) }
    @discardableResult public func resume(key: String) -> Bool { engine.resume(key: key) }
    public func remaining(key: String) -> Duration? { engine.remaining(key: key) }
    public var activeKeys: [String] { engine.activeKeys }
    public var activeCount: Int { engine.activeCount }
    public func enteredBackground() { engine.enteredBackground() }
    public func enteredForeground() { engine.enteredForeground() }
    public func shutdown() { engine.shutdown() }

    @discardableResult
    public func restore(from store: CountdownStore) throws(CountdownStoreError) -> CountdownRestoration {
        try engine.restore(from: store)
    }

    public func waitUntilStored() { engine.waitUntilStored() }

    fileprivate func engineObservation(key: String) -> (registration: ObserverRegistration, observed: Bool)? {
        engine.observation(key: key)
    }
}

extension KeyedCountdownScheduler {
    /// Who observes `key`'s countdown: its observer's registration, and whether anyone is
    /// registered. For tests.
    func observation(key: String) -> (registration: ObserverRegistration, observed: Bool)? {
        (self as? any EngineBacked)?.engineObservation(key: key)
    }
}
