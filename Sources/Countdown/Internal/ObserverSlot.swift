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
    private let isRevoked = Atomic<Bool>(false)

    init(_ observer: @escaping CountdownObserver) {
        self.observer = observer
    }

    /// The slot of a countdown nobody observes (its stream's consumer went away): it hears
    /// everything and tells no one.
    static let silent = ObserverSlot { _ in }

    func revoke() {
        isRevoked.store(true, ordering: .releasing)
    }

    /// Calls the observer unless the slot was revoked. No lock is held during the call, so the
    /// observer may call back into the scheduler.
    func deliver(_ event: CountdownEvent) {
        guard !isRevoked.load(ordering: .acquiring) else { return }
        observer(event)
    }
}
