/// A binary min-heap of (due instant, countdown), for the one ticker that drives every
/// timestamp countdown. Entries are never removed early: a cancelled or paused countdown's
/// entry pops at its due time and is found stale, at most one tick later.
struct DueHeap {
    private var items: [(due: MonotonicInstant, id: CountdownID)] = []

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }
    var earliest: MonotonicInstant? { items.first?.due }

    mutating func insert(_ id: CountdownID, due: MonotonicInstant) {
        items.append((due, id))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].due < items[parent].due else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns every entry due at or before `now`, earliest first.
    mutating func popDue(at now: MonotonicInstant, into batch: inout [CountdownID]) {
        while let first = items.first, first.due <= now {
            batch.append(first.id)
            let last = items.removeLast()
            guard !items.isEmpty else { break }
            items[0] = last
            siftDown(from: 0)
        }
    }

    private mutating func siftDown(from index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < items.count, items[left].due < items[smallest].due { smallest = left }
            if right < items.count, items[right].due < items[smallest].due { smallest = right }
            guard smallest != parent else { return }
            items.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
