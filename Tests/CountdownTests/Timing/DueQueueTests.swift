import CountdownSupport
import Dispatch
import Synchronization
import Testing

@testable import Countdown
@testable import CountdownBenchKit
@testable import CountdownConformance

/// The recommended backend's one queue of due instants, as a value: pops in due order, keeps filing order.
@Suite("Due queue")
struct DueQueueTests {
    @Test("the due queue pops in due order, every item once, whatever the order of inserts")
    func dueQueuePopsInOrder() {
        var generator = SplitMix(seed: 42)
        var queue = DueQueue()
        var expected: [UInt64] = []
        for index in 0..<5_000 {
            let due = generator.next() % 1_000_000
            queue.insert(DueItem(due: MonotonicInstant(nanoseconds: due), index: UInt32(index), arm: 1))
            expected.append(due)
        }
        var popped: [DueItem] = []
        // Pops in several steps, with inserts after the first, as a ticker does.
        queue.popDue(at: MonotonicInstant(nanoseconds: 250_000), into: &popped)
        #expect(popped.allSatisfy { $0.due.nanoseconds <= 250_000 })
        for index in 5_000..<5_500 {
            let due = 250_001 + generator.next() % 750_000
            queue.insert(DueItem(due: MonotonicInstant(nanoseconds: due), index: UInt32(index), arm: 1))
            expected.append(due)
        }
        queue.popDue(at: MonotonicInstant(nanoseconds: .max), into: &popped)
        #expect(queue.count == 0 && queue.earliest == nil)
        #expect(popped.map(\.due.nanoseconds) == expected.sorted())
        #expect(Set(popped.map(\.index)).count == expected.count)
    }

    @Test("the due queue keeps filing order across its run's chunks: a front taken while the back fills, none lost or doubled")
    func dueQueueAcrossChunks() {
        var queue = DueQueue()
        let total = 3 * 65_536 + 123
        var filed = 0, popped: [DueItem] = []
        // Files in order, taking the front every so often, so that chunks are used up at the
        // front while others fill at the back, and the queue empties and fills again.
        while filed < total {
            let step = min(40_000, total - filed)
            for index in filed..<(filed + step) {
                queue.insert(DueItem(due: MonotonicInstant(nanoseconds: UInt64(index)), index: UInt32(index), arm: 1))
            }
            filed += step
            queue.popDue(at: MonotonicInstant(nanoseconds: UInt64(filed - step / 2)), into: &popped)
            #expect(queue.count == filed - popped.count)
            if filed % 3 == 0 { queue.popDue(at: MonotonicInstant(nanoseconds: .max), into: &popped) }
        }
        queue.popDue(at: MonotonicInstant(nanoseconds: .max), into: &popped)
        #expect(queue.count == 0 && queue.earliest == nil)
        #expect(queue.heapCount == 0, "items filed in order all join the run")
        #expect(popped.map(\.index) == (0..<UInt32(total)).map { $0 })
    }

    @Test("the due queue pops in due order while a ticker files items again at due + tick, with first fires between")
    func dueQueuePopsInOrderAsATickerRefiles() {
        var generator = SplitMix(seed: 7)
        var queue = DueQueue()
        let tick: UInt64 = 1_000
        var pending: [UInt64] = []
        var popped: [DueItem] = []
        var now: UInt64 = 0
        var next: UInt32 = 0
        var sawHeap = false, sawRun = false
        func file(_ due: UInt64) {
            queue.insert(DueItem(due: MonotonicInstant(nanoseconds: due), index: next, arm: 1))
            pending.append(due)
            next += 1
        }
        for _ in 0..<300 { file(generator.next() % tick) }
        for _ in 0..<400 {
            now += generator.next() % 300
            var batch: [DueItem] = []
            queue.popDue(at: MonotonicInstant(nanoseconds: now), into: &batch)
            #expect(batch.allSatisfy { $0.due.nanoseconds <= now }, "nothing popped before it is due")
            #expect(batch.map(\.due) == batch.map(\.due).sorted(), "a batch is earliest first")
            #expect(zip(popped.suffix(1), batch.prefix(1)).allSatisfy { $0.due <= $1.due }, "and after the batch before")
            #expect(queue.earliest.map { $0.nanoseconds > now } ?? true, "everything due was popped")
            popped += batch
            // Most go again one tick later, in the order they came due (the run); a new first
            // fire now and then lands before the last of them (the heap).
            for item in batch where generator.next() % 10 != 0 { file(item.due.nanoseconds + tick) }
            if generator.next() % 3 == 0 { file(now + 1 + generator.next() % tick) }
            sawHeap = sawHeap || queue.heapCount > 0
            sawRun = sawRun || queue.count > queue.heapCount
        }
        queue.popDue(at: MonotonicInstant(nanoseconds: .max), into: &popped)
        #expect(queue.count == 0 && queue.earliest == nil)
        #expect(popped.map(\.due.nanoseconds).sorted() == pending.sorted(), "every item popped once")
        #expect(popped.count > 3_000 && sawHeap && sawRun, "both the run and the heap held items (\(popped.count) popped)")
    }

    @Test("items filed in due order leave in filing order across the run's growths and wraps, as the queue drains and fills again")
    func dueRunKeepsFilingOrderAcrossGrowths() {
        var queue = DueQueue()
        var filed: UInt64 = 0
        var popped: [DueItem] = []
        func file(_ count: Int) {
            for _ in 0..<count {
                queue.insert(DueItem(due: MonotonicInstant(nanoseconds: filed), index: UInt32(truncatingIfNeeded: filed), arm: 1))
                filed += 1
            }
        }
        // Filed past several doublings, popped part way (the front moves), filed again (the
        // back wraps, then the ring grows with its front mid-buffer), drained to empty, then
        // filed once more into the emptied queue.
        file(10_000)
        queue.popDue(at: MonotonicInstant(nanoseconds: 4_095), into: &popped)
        file(5_000)
        queue.popDue(at: MonotonicInstant(nanoseconds: 12_287), into: &popped)
        #expect(queue.count == 15_000 - 12_288 && queue.earliest?.nanoseconds == 12_288)
        file(20_000)
        queue.popDue(at: MonotonicInstant(nanoseconds: .max), into: &popped)
        #expect(queue.count == 0 && queue.earliest == nil)
        file(3)
        queue.popDue(at: MonotonicInstant(nanoseconds: .max), into: &popped)
        #expect(queue.heapCount == 0, "every item was filed in due order: none went to the heap")
        #expect(popped.map(\.due.nanoseconds) == Array(0..<filed), "each once, in filing order")
    }
}
