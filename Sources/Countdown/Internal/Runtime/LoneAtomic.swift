import Synchronization

/// An atomic word on a cache line of its own, for a word one thread writes often while others
/// read the fields beside it on every call: inline in a class among them, each store would
/// take the whole line from the readers' caches (false sharing).
///
/// The padding before and after is a line each, so whatever the object's address, no other
/// object shares the word's line. (Swift lays out a class's stored properties in the order
/// they are declared.)
final class LoneAtomic: Sendable {
    private typealias Line = (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
    private let before: Line = (0, 0, 0, 0, 0, 0, 0, 0)
    let word: Atomic<UInt64>
    private let after: Line = (0, 0, 0, 0, 0, 0, 0, 0)

    init(_ initial: UInt64) {
        word = Atomic(initial)
    }
}
