/// What a decision put in the ``DeliveryPipeline``, for the engine to act on after the lock:
/// what one append answers, and what a decision's appends add up to. Kinds, in the order one
/// decision may move through them.
package enum Handover: Equatable, Sendable {
    case nothing
    /// Events or first fires, for a drain already queued.
    case added
    /// The same, and no drain was queued: the engine queues one.
    case owingDrain

    /// Adds what one more append answered.
    @inline(__always)
    mutating func add(_ appended: Handover) {
        if appended == .owingDrain { self = .owingDrain } else if self == .nothing { self = .added }
    }
}
