#if Redis
/// A binary min-heap of tick instants; a popped entry is checked against the registry (a stale
/// one, whose countdown was paused, ended or filed again, is skipped).
struct TickHeap {
    private var items: [(instant: Int64, generation: Int64)] = []

    func peek() -> (instant: Int64, generation: Int64)? { items.first }

    var isEmpty: Bool { items.isEmpty }

    mutating func push(instant: Int64, generation: Int64) {
        items.append((instant, generation))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].instant < items[parent].instant else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var least = parent
            if left < items.count, items[left].instant < items[least].instant { least = left }
            if right < items.count, items[right].instant < items[least].instant { least = right }
            guard least != parent else { return }
            items.swapAt(parent, least)
            parent = least
        }
    }

    mutating func removeAll() { items.removeAll() }
}
#endif
