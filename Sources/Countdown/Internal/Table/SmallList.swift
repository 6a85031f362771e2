/// A list that keeps a single element inline: what one operation on one countdown decides (a
/// timer to arm or disarm) fits without an allocation. From the second element on, all of them
/// live in one array.
struct SmallList<Element>: Sequence {
    /// Set only while the list holds exactly one element.
    private var single: Element?
    /// Every element once there are two or more; empty otherwise.
    private var many: ContiguousArray<Element> = []

    init() {}

    /// Takes the element over: a temporary is moved in, not copied (which retained every
    /// reference it holds, then released the original's).
    mutating func append(_ element: consuming Element) {
        if single == nil && many.isEmpty {
            single = consume element
            return
        }
        if let first = single.take() { many.append(first) }
        many.append(element)
    }

    var isEmpty: Bool { single == nil && many.isEmpty }

    /// Hands every element to `body`, in order, and leaves the list empty. A single element
    /// is moved out, not copied.
    mutating func removeAll(_ body: (Element) throws -> Void) rethrows {
        if let element = single.take() { return try body(element) }
        let all = many
        many = []
        for element in all { try body(element) }
    }

    func makeIterator() -> IndexingIterator<ContiguousArray<Element>> {
        (single.map { [$0] } ?? many).makeIterator()
    }
}

extension SmallList: Sendable where Element: Sendable {}
