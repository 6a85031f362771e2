/// Names one observer a table registered at a place (an attach's, a stream's), for a detach
/// later: the place and the registration's number there, which only grows (see
/// ``DeliveryGate``). An observer that was replaced, or whose countdown ended, is named by
/// nothing the place holds any more.
struct ObserverRegistration: Equatable, Sendable {
    let place: UInt32
    let number: UInt32
}
