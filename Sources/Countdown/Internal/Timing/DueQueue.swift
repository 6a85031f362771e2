/// The due countdowns of the one ticker that drives every timestamp countdown: a run of items
/// filed in due order, and a 4-ary min-heap for the rest; a pop takes the earlier of the two
/// fronts.
///
/// Countdowns with the same tick are filed again at due + tick, in the order they came due, so
/// in the steady state nearly every item joins the back of the run and leaves from its front:
/// two sequential streams of memory, where a heap of a million sifted each pop through ten
/// cache lines, most of them misses. An item due before the run's back (a first fire filed
/// between re-filings, a shorter last interval, a resume) goes into the heap: 16-byte items,
/// four children to a 64-byte line.
///
/// Items are never removed early: a cancelled, paused or finished countdown's item pops at its
/// time and the table finds it stale. Every item is due within one tick of being filed, so the
/// stale ones are bounded by the cancels, pauses and resumes of one tick.
struct DueQueue {
    private var heap: [DueItem] = []
    private var run = DueRun()

    var count: Int { heap.count + run.count }
    /// How many are in the heap, not the run. For tests.
    var heapCount: Int { heap.count }

    var earliest: MonotonicInstant? {
        guard let front = run.first?.due else { return heap.first?.due }
        return heap.first.map { min($0.due, front) } ?? front
    }

    mutating func insert(_ item: DueItem) {
        if run.last.map({ $0.due <= item.due }) ?? true {
            run.append(item)
            return
        }
        heap.append(item)
        heap.withUnsafeMutableBufferPointer { heap in
            Self.siftUp(heap, from: heap.count - 1, item)
        }
    }

    /// Moves every item due at or before `now` into `batch`, earliest first.
    mutating func popDue(at now: MonotonicInstant, into batch: inout [DueItem]) {
        while true {
            let top = heap.first
            if let front = run.first, top.map({ front.due <= $0.due }) ?? true {
                guard front.due <= now else { return }
                batch.append(front)
                run.removeFirst()
            } else if let top, top.due <= now {
                batch.append(top)
                popHeap()
            } else {
                return
            }
        }
    }

    private mutating func popHeap() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap.withUnsafeMutableBufferPointer { heap in
            let hole = Self.holeToBottom(heap)
            Self.siftUp(heap, from: hole, last)
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

/// Due items in filing order: appended at the back, taken from the front, in chunks of
/// ``chunkSize`` that are never copied. A ring grown by doubling copied every item under the
/// ticker's lock, and allocated and touched twice the memory at once: at ten million
/// countdowns, going from 8 to 16 million items held every wake-up for about 200 ms (the
/// run's p99.9 lateness). A chunk emptied at the front is kept for the next one needed at the
/// back, so the steady state allocates nothing.
private struct DueRun {
    /// 65 536 items, 1 MiB.
    static var chunkSize: Int { 1 << 16 }

    /// The chunks in order; the first `chunks[0]` items from `head` on are the front.
    private var chunks: [ContiguousArray<DueItem>] = []
    /// Where the front item is in the first chunk.
    private var head = 0
    private var spare: ContiguousArray<DueItem>?
    private(set) var count = 0

    var first: DueItem? { count == 0 ? nil : chunks[0][head] }
    var last: DueItem? { count == 0 ? nil : chunks[chunks.count - 1].last }

    mutating func append(_ item: DueItem) {
        if chunks.isEmpty || chunks[chunks.count - 1].count == Self.chunkSize {
            var chunk = spare.take() ?? ContiguousArray()
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(item)
        count += 1
    }

    mutating func removeFirst() {
        head += 1
        count -= 1
        guard head == chunks[0].count else { return }
        // The first chunk is used up: kept for reuse, unless it is the only one and still fills.
        if chunks.count == 1 && chunks[0].count < Self.chunkSize { return }
        var emptied = chunks.removeFirst()
        emptied.removeAll(keepingCapacity: true)
        if spare == nil { spare = emptied }
        head = 0
    }
}
