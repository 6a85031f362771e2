/// Deliveries a drain put back to wait for the store: the first `count` pending ones were
/// decided before the table's change count was `through`, so a write that covers it frees them
/// (a finish is heard only once the file no longer holds its countdown).
package struct DeliveryHold: Equatable, Sendable {
    let count: Int
    let through: UInt64
}
