#if Redis
import Countdown
import Foundation
import Synchronization

/// What a Redis strategy's engine does for ``RedisCountdownScheduler``: every call is a
/// ``FleetCall``, run by a task or waited for by a thread, which throws `CountdownError`
/// (`CountdownError/unavailable(_:_:)` when Redis cannot answer); the observers' side is the
/// ``LocalWatch`` each engine keeps.
protocol FleetEngine: Sendable {
    var settings: SchedulerSettings { get }
    var watch: LocalWatch { get }
    /// Calls the protocol's non-throwing forms answered as if nothing were there.
    var unavailableCalls: Atomic<Int> { get }
    /// What the member's own threads met when Redis refused or failed them.
    var background: BackgroundFailures { get }

    func start(key: String, duration: Duration, observer: FleetObserver) -> FleetCall<CountdownStart>
    /// A batch's starts, as calls run a few at a time (``FleetCall/waitAll(_:window:)``): each
    /// answers for the starts at `indices`; a start refused before any call is in `refused`.
    func startMany(_ batch: [(String, Duration, FleetObserver)]) -> FleetBatch
    func attach(key: String, observer: FleetObserver) -> FleetCall<Duration?>
    func cancel(key: String) -> FleetCall<Bool>
    func pause(key: String) -> FleetCall<Bool>
    func resume(key: String) -> FleetCall<Bool>
    func remaining(key: String) -> FleetCall<Duration?>
    func activeKeys() -> FleetCall<[String]>
    func activeCount() -> FleetCall<Int>
    func shutdown()
}

/// Keys compare by canonical equivalence, as Swift's strings do; Redis compares bytes: every key
/// goes to Redis in one canonical form (NFC).
func canonicalKey(_ key: String) -> String {
    // ASCII is its own canonical form; only other keys pay for Foundation's normalization.
    key.utf8.allSatisfy { $0 < 0x80 } ? key : key.precomposedStringWithCanonicalMapping
}

/// A new member's name in the fleet: random, new for every scheduler; tokens and call records
/// carry it, so it holds neither `/` nor `:`.
func newMemberName() -> String { String(UInt64.random(in: 0...UInt64.max), radix: 36) }
#endif
