@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Synchronization
import Testing

// Aimed at `attach`, `attach-only`, `pause-resume` and `cancel`.

final class RestartsOnAttach: Forwarding, @unchecked Sendable {
    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        _ = inner.cancel(key: key)
        return try inner.start(key: key, duration: duration, observer: observer)
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

/// Attaching to a paused countdown quietly resumes it.
final class AttachResumes: Forwarding, @unchecked Sendable {
    override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        _ = inner.resume(key: key)
        return try inner.start(key: key, duration: duration, observer: observer)
    }
}

/// `attach(key:)` quietly resumes a paused countdown.
final class AttachOnlyResumes: Forwarding, @unchecked Sendable {
    override func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        _ = inner.resume(key: key)
        return inner.attach(key: key, observer: observer)
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
