@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Synchronization
import Testing

// Aimed at `events` and `lifecycle`.

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
