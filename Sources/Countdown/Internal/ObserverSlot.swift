import CountdownSupport


/// Holds one registration of an observer. Every delivery queued for it goes through the
/// slot, so revoking the slot (cancel, replace, shutdown) silences deliveries already queued
/// and drops the scheduler's reference to the closure at once, not when the queue drains.
final class ObserverSlot: Sendable {
    private let observer: Locked<CountdownObserver?>

    init(_ observer: @escaping CountdownObserver) {
        self.observer = Locked(observer)
    }

    func revoke() {
        observer.withLock { $0 = nil }
    }

    /// Calls the observer unless the slot was revoked. The lock is not held during the call,
    /// so the observer may call back into the scheduler.
    func deliver(_ event: CountdownEvent) {
        let current = observer.withLock { $0 }
        current?(event)
    }

    /// Delivers the countdown's last event and releases the observer.
    func deliverLast(_ event: CountdownEvent) {
        let current = observer.withLock { slot -> CountdownObserver? in
            defer { slot = nil }
            return slot
        }
        current?(event)
    }
}
