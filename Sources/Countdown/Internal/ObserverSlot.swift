import Synchronization

/// Holds one registration of an observer. Every delivery queued for it goes through the
/// slot, so revoking the slot (cancel, replace, shutdown) silences deliveries already queued.
///
/// The deliveries still queued hold the slot until the delivery queue has run them. A slot a
/// start made stays in its countdown's place when the countdown ends, and is the next
/// occupant's once nothing else holds it: a start then allocates nothing (see
/// ``CountdownTable/install(_:in:_:)``). The observer goes as the contract says: with the last
/// delivery of a revoked slot, with the finish's delivery (``deliver(_:generation:)`` lets go
/// of it, for a slot its place keeps), or, for a cancel with nothing left to deliver, once the
/// table's lock is released.
///
/// `@unchecked Sendable`: `observer` is replaced, by two parties only, each at a time when
/// nobody else reads it. The table replaces it under its lock, and only while it holds the
/// slot's one strong reference (`isKnownUniquelyReferenced`): no delivery is queued, no effect
/// holds it. The delivery queue replaces it after delivering the slot's finish, which is the
/// last delivery a registration ever has, and the table does not touch it until that
/// delivery's reference is released. Swift's reference counting orders the two: a release is
/// a releasing store, the uniqueness check an acquiring load. The flag is an atomic; a
/// delivery reads no lock and builds no closure (a closure kept in a generic container is
/// re-wrapped, and allocated, on every read).
final class ObserverSlot: @unchecked Sendable {
    private var observer: CountdownObserver
    /// Deliveries of a lower pause generation are dropped: those decided before the countdown's
    /// latest pause. `.max` once revoked: every delivery is dropped (a place's generation stops
    /// below it). One atomic for both, so a
    /// delivery reads one word.
    private let threshold = Atomic<UInt32>(0)

    init(_ observer: @escaping CountdownObserver) {
        self.observer = observer
    }

    /// The slot of a countdown nobody observes (its stream's consumer went away): it hears
    /// everything and tells no one. Shared: never reused, never emptied.
    static let silent = ObserverSlot { _ in }

    /// What a slot holds between two registrations: no context, so nothing is kept alive.
    private static func nobody(_: CountdownEvent) {}

    /// Makes this slot, which nothing else holds, a new registration of `observer`. Returns
    /// the observer it held, for the caller to let go of once its lock is released.
    /// - Precondition: the caller holds the slot's only strong reference.
    func reregister(_ observer: @escaping CountdownObserver) -> CountdownObserver {
        threshold.store(0, ordering: .relaxed)
        return swapObserver(observer)
    }

    /// Empties this slot, which nothing else holds, for a later registration; returns the
    /// observer, for the caller to let go of once its lock is released.
    /// - Precondition: the caller holds the slot's only strong reference.
    func empty() -> CountdownObserver {
        swapObserver(Self.nobody)
    }

    private func swapObserver(_ new: @escaping CountdownObserver) -> CountdownObserver {
        var old = new
        swap(&old, &observer)
        return old
    }

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
    /// into the scheduler. After a finish, heard or dropped, the slot lets go of its observer:
    /// nothing follows a finish, and the place that keeps the slot must not keep the observer.
    /// Only on the delivery queue.
    func deliver(_ event: CountdownEvent, generation: UInt32) {
        if generation >= threshold.load(ordering: .acquiring) { observer(event) }
        if event.kind == .finished && self !== Self.silent {
            // Released here, on the delivery queue, as the last delivery's reference would be.
            _ = empty()
        }
    }
}
