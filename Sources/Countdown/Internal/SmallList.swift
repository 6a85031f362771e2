/// A list that keeps its first element inline: what one operation on one countdown decides
/// (an event, a timer to arm) fits without an allocation, and a batch spills over.
struct SmallList<Element>: Sequence {
    private var first: Element?
    private var rest: [Element] = []

    init() {}

    mutating func append(_ element: Element) {
        if first == nil { first = element } else { rest.append(element) }
    }

    var isEmpty: Bool { first == nil }

    var count: Int { first == nil ? 0 : 1 + rest.count }

    mutating func reserveCapacity(_ capacity: Int) {
        if capacity > 1 { rest.reserveCapacity(capacity - 1) }
    }

    /// Hands every element to `body`, in order, and leaves the list empty: the elements are
    /// moved out, not copied (no reference counting on the way).
    mutating func removeAll(_ body: (Element) throws -> Void) rethrows {
        if let element = first.take() { try body(element) }
        if !rest.isEmpty {
            let spilled = rest
            rest = []
            for element in spilled { try body(element) }
        }
    }

    func makeIterator() -> Iterator { Iterator(list: self) }

    struct Iterator: IteratorProtocol {
        let list: SmallList
        var position = 0

        mutating func next() -> Element? {
            defer { position += 1 }
            if position == 0 { return list.first }
            return position - 1 < list.rest.count ? list.rest[position - 1] : nil
        }
    }
}

extension SmallList: Sendable where Element: Sendable {}
