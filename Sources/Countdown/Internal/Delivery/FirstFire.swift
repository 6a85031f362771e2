/// A countdown's first fire, decided with its first tick and filed by the drain that takes it,
/// for a mechanism whose one queue of due instants is filed on the delivery queue (see
/// ``ArmingStyle/sharedDueQueue``): a start takes no lock of the ticker's.
struct FirstFire: Sendable {
    let id: CountdownID
    let at: MonotonicInstant
}
