/// A countdown due at an instant, named by its place in the table and its arming.
struct DueItem {
    var due: MonotonicInstant
    let index: UInt32
    let arm: UInt32
}

/// A 4-ary min-heap of due countdowns, for the one ticker that drives every timestamp
/// countdown: 16-byte items, four children to a 64-byte cache line, so a sift down a heap of
/// a million touches ten lines.
///
/// Items are never removed early: a cancelled, paused or finished countdown's item pops at its
/// time and the table finds it stale. Every item is due within one tick of being filed, so the
/// stale ones are bounded by the cancels, pauses and resumes of one tick.
///
/// Countdowns with the same tick are filed again at due + tick, later than everything already
/// filed, so an insert rarely climbs; a pop is a hole sifted to the bottom (the cheaper half
/// of the comparisons) and the last item sifted up into it.
struct DueQueue {
    private var items: [DueItem] = []

    var count: Int { items.count }
    var earliest: MonotonicInstant? { items.first?.due }

    mutating func insert(_ item: DueItem) {
        items.append(item)
        items.withUnsafeMutableBufferPointer { heap in
            Self.siftUp(heap, from: heap.count - 1, item)
        }
    }

    /// Moves every item due at or before `now` into `batch`, earliest first.
    mutating func popDue(at now: MonotonicInstant, into batch: inout [DueItem]) {
        while let first = items.first, first.due <= now {
            batch.append(first)
            let last = items.removeLast()
            guard !items.isEmpty else { break }
            items.withUnsafeMutableBufferPointer { heap in
                let hole = Self.holeToBottom(heap)
                Self.siftUp(heap, from: hole, last)
            }
        }
    }

    private static func siftUp(_ heap: UnsafeMutableBufferPointer<DueItem>, from index: Int, _ item: DueItem) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 4
            guard item.due < heap[parent].due else { break }
            heap[child] = heap[parent]
            child = parent
        }
        heap[child] = item
    }

    /// Moves the hole left at the root down to a leaf, always filling it from the earliest child.
    private static func holeToBottom(_ heap: UnsafeMutableBufferPointer<DueItem>) -> Int {
        let count = heap.count
        var hole = 0
        while true {
            let first = 4 * hole + 1
            guard first < count else { return hole }
            var best = first
            let end = min(first + 4, count)
            var child = first + 1
            while child < end {
                if heap[child].due < heap[best].due { best = child }
                child += 1
            }
            heap[hole] = heap[best]
            hole = best
        }
    }
}
