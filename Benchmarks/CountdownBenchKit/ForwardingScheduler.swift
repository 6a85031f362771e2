import Countdown
import Dispatch

/// A scheduler that forwards every member to another: the one place the protocol's members are
/// forwarded. A subclass changes what it must (the benchmark's company of sleeping workers, the
/// tests' broken backends), and `wrap(_:key:)` is where it may change what observers hear.
///
/// `@unchecked Sendable`: meant for subclassing (so not final, which the compiler would need
/// to check it); its one stored property is an immutable `Sendable` scheduler, and subclasses
/// keep their state behind locks or atomics.
class ForwardingScheduler: CountdownScheduler, @unchecked Sendable {
    let inner: any CountdownScheduler

    init(_ inner: any CountdownScheduler) { self.inner = inner }

    var profile: CountdownProfile { inner.profile }
    var tickInterval: Duration { inner.tickInterval }
    var deliveryQueue: DispatchQueue { inner.deliveryQueue }

    func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        try inner.start(key: key, duration: duration, observer: wrap(observer, key: key))
    }

    func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        inner.attach(key: key, observer: wrap(observer, key: key))
    }

    /// What the observers given to `start` and `attach` become; themselves by default.
    func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver { observer }

    func events(key: String) -> AsyncStream<CountdownEvent> { inner.events(key: key) }
    func cancel(key: String) -> Bool { inner.cancel(key: key) }
    func pause(key: String) -> Bool { inner.pause(key: key) }
    func resume(key: String) -> Bool { inner.resume(key: key) }
    func remaining(key: String) -> Duration? { inner.remaining(key: key) }
    var activeKeys: [String] { inner.activeKeys }
    var activeCount: Int { inner.activeCount }
    func enteredBackground() { inner.enteredBackground() }
    func enteredForeground() { inner.enteredForeground() }
    func shutdown() { inner.shutdown() }
}
