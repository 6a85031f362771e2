import Synchronization

/// Holds one registration of an observer. Every delivery queued for it goes through the
/// slot, so revoking the slot (cancel, replace, shutdown) silences deliveries already queued.
///
/// The table lets go of a slot when it revokes it; the deliveries still queued hold it until
/// the delivery queue has run them, and the observer goes with the last of them, as the
/// contract allows. The observer is a plain constant and the flag an atomic: a delivery reads
/// no lock and builds no closure (a closure kept in a generic container is re-wrapped, and
/// allocated, on every read).
final class ObserverSlot: Sendable {
    private let observer: CountdownObserver
    /// Deliveries of a lower pause generation are dropped: those decided before the countdown's
    /// latest pause. `.max` once revoked: every delivery is dropped (a place's generation stops
    /// below it). One atomic for both, so a
    /// delivery reads one word.
    private let threshold = Atomic<UInt32>(0)

    init(_ observer: @escaping CountdownObserver) {
        self.observer = observer
    }

    /// The slot of a countdown nobody observes (its stream's consumer went away): it hears
    /// everything and tells no one.
    static let silent = ObserverSlot { _ in }

    func revoke() {
        threshold.store(.max, ordering: .releasing)
    }

    /// The countdown was paused: deliveries decided before, of a generation below `generation`,
    /// are dropped (a tick queued behind the pause is never heard).
    func silence(below generation: UInt32) {
        var current = threshold.load(ordering: .relaxed)
        while current < generation {
            let (exchanged, seen) = threshold.compareExchange(
                expected: current, desired: generation, ordering: .acquiringAndReleasing)
            if exchanged { return }
            current = seen
        }
    }

    /// Calls the observer unless the slot was revoked, or the delivery was decided before the
    /// countdown's latest pause. No lock is held during the call, so the observer may call back
    /// into the scheduler.
    func deliver(_ event: CountdownEvent, generation: UInt32) {
        guard generation >= threshold.load(ordering: .acquiring) else { return }
        observer(event)
    }
}
