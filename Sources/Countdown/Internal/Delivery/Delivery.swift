/// One event decided for one observer, waiting in the ``DeliveryPipeline`` for the delivery
/// queue: the observer, the event, and what its place's ``DeliveryGate`` must still admit.
struct Delivery: Sendable {
    let observer: CountdownObserver
    let event: CountdownEvent
    /// Its place's gate, read when it is delivered.
    let gate: DeliveryGate
    /// The observer's registration at its place (see ``DeliveryGate``).
    let registration: UInt32
    /// The pause generation of its countdown when it was decided, or ``answer``.
    let generation: UInt32

    /// The generation of a tick that answers a call (a start's, an attach's): no pause
    /// silences it, only a revocation. Pause generations stay below it.
    static let answer = UInt32.max - 1

    /// Calls the observer unless its registration was revoked, or the event was decided
    /// before the countdown's latest pause. No lock is held during the call, so the
    /// observer may call back into the scheduler. Only on the delivery queue.
    func deliver() {
        withUnsafePointer(to: self) { Self.deliver(at: $0) }
    }

    /// The same, for the delivery at `delivery`, read in place, field by field (the drain's
    /// loop: a delivery read whole was copied, observer and key retained, to read its gate).
    @inline(__always)
    static func deliver(at delivery: UnsafePointer<Delivery>) {
        guard delivery.pointee.gate.admits(
            registration: delivery.pointee.registration, generation: delivery.pointee.generation)
        else { return }
        delivery.pointee.observer(delivery.pointee.event)
    }

    /// Delivers the first `count` of `deliveries`, in order, each read where it lies: a loop
    /// over the array, or over its buffer, copied each delivery whole to read its gate (its
    /// observer and its event's key retained, then released: callgrind, about 80 instructions
    /// an event).
    static func deliver(_ deliveries: borrowing ContiguousArray<Delivery>, upTo count: Int) {
        deliveries.withUnsafeBufferPointer { buffer in
            guard let first = buffer.baseAddress else { return }
            for index in 0..<count { deliver(at: first + index) }
        }
    }
}
