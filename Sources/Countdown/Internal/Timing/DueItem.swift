/// A countdown due at an instant, named by its place in the table and its arming: what the
/// ticker's ``DueQueue`` holds, and a countdown's first fire, which rides the
/// ``DeliveryPipeline`` beside its first tick and is filed by the drain that takes it (see
/// ``ArmingStyle/sharedDueQueue``): a start takes no lock of the ticker's.
struct DueItem: Sendable {
    var due: MonotonicInstant
    let index: UInt32
    let arm: UInt32
}
