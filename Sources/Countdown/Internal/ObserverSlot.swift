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
    /// Told once, when the slot is revoked: an event stream ends there. Called with the table's
    /// lock held, so it must not call back into the table.
    private let ended: (@Sendable () -> Void)?
    private let isRevoked = Atomic<Bool>(false)

    init(_ observer: @escaping CountdownObserver, ended: (@Sendable () -> Void)? = nil) {
        self.observer = observer
        self.ended = ended
    }

    /// The slot of a countdown nobody observes (its stream's consumer went away): it hears
    /// everything and tells no one.
    static let silent = ObserverSlot { _ in }

    func revoke() {
        guard !isRevoked.exchange(true, ordering: .acquiringAndReleasing) else { return }
        ended?()
    }

    /// Calls the observer unless the slot was revoked. No lock is held during the call, so the
    /// observer may call back into the scheduler.
    func deliver(_ event: CountdownEvent) {
        guard !isRevoked.load(ordering: .acquiring) else { return }
        observer(event)
    }
}
