import Synchronization
import Testing

@testable import Countdown

/// The delivery pipeline as a value: what an append asks, what a drain takes, its phases, and
/// the buffers it keeps. No clock, no thread.
@Suite("Delivery pipeline")
struct DeliveryPipelineTests {
    /// A drain's batch, begun as the engine begins one at `now`.
    static func begin(_ pipeline: inout DeliveryPipeline<Delivery>, lingering: Bool = false, at now: UInt64 = 1_000_000)
        -> (DeliveryBatch<Delivery>, DrainRun)
    {
        var batch = DeliveryBatch<Delivery>()
        let run = pipeline.beginDrain(at: now, lingering: lingering, continuing: false, into: &batch)
        return (batch, run)
    }

    @Test("first fires alone are work: the first queues a drain, and the drain that takes them stays queued until it finds nothing")
    func firstFiresAreWork() {
        var pipeline = DeliveryPipeline<Delivery>()
        /// Appends first fires for `indices`; whether one of them asked for a drain.
        func fires(_ indices: UInt32...) -> Bool {
            var owed = false
            for index in indices {
                let fire = DueItem(due: MonotonicInstant(nanoseconds: 7), index: index, arm: 1)
                owed = pipeline.append(fire) == .owingDrain || owed
            }
            return owed
        }
        #expect(fires(1), "no drain was queued")
        #expect(pipeline.phase == .draining)
        #expect(!fires(2, 3), "the drain queued takes them too")
        var (batch, _) = Self.begin(&pipeline)
        #expect(batch.firstFires.map(\.index) == [1, 2, 3])
        #expect(batch.deliveries.isEmpty)
        #expect(batch.through == 0, "first fires are not events: no ticket")
        batch.firstFires.removeAll()
        // The drain took something: it looks again, so a first fire meanwhile queues no second drain.
        #expect(!fires(4))
        pipeline.take(into: &batch, staying: false)
        #expect(batch.firstFires.map(\.index) == [4])
        batch.firstFires.removeAll()
        // It found nothing and ended: the next first fire queues a drain.
        #expect(pipeline.takeOrEnd(into: &batch, handedBack: false, at: 2_000_000))
        #expect(batch.firstFires.isEmpty && pipeline.phase == .idle && pipeline.lastDrainEnd == 2_000_000)
        #expect(fires(5))
    }

    @Test("a drain that handed the queue back ends without ending the pipeline's drain: the one it queued takes what comes next")
    func handedBackStaysQueued() {
        var pipeline = DeliveryPipeline<Delivery>()
        #expect(pipeline.append(Delivery.unheard(.tick("k", .seconds(1)))) == .owingDrain)
        var (batch, _) = Self.begin(&pipeline)
        batch.deliveries.removeAll(keepingCapacity: true)
        #expect(!pipeline.takeOrEnd(into: &batch, handedBack: true, at: 5), "a handed-back take found nothing and must not end")
        #expect(pipeline.isDrainQueued)
        #expect(pipeline.append(Delivery.unheard(.tick("k", .seconds(1)))) == .added, "the drain queued at the turn takes it")
    }

    @Test("a hold puts the front back before what came after it, and the next drain begins with it")
    func holdForTheStore() {
        var pipeline = DeliveryPipeline<Delivery>()
        for second in 1...3 { _ = pipeline.append(Delivery.unheard(.tick("k", .seconds(second)))) }
        var (batch, run) = Self.begin(&pipeline)
        #expect(run.hold == nil)
        _ = pipeline.append(Delivery.unheard(.finished("k")))
        let hold = DeliveryHold(count: 2, through: 9)
        pipeline.hold(batch.deliveries[1...], hold)
        batch.deliveries.removeAll()
        #expect(pipeline.phase == .heldForStore(hold))
        #expect(pipeline.append(Delivery.unheard(.finished("j"))) == .added, "held, the drain is still owed: the writer queues it")
        (batch, run) = Self.begin(&pipeline)
        #expect(run.hold == hold && pipeline.phase == .draining)
        #expect(batch.deliveries.map(\.event) == [.tick("k", .seconds(2)), .tick("k", .seconds(3)), .finished("k"), .finished("j")])
    }

    @Test("a drain's buffers go to the next drain: what is decided after it ends is appended into a buffer with room, not one grown again by doubling")
    func buffersGoToTheNextDrain() {
        var pipeline = DeliveryPipeline<Delivery>()
        /// Appends `count` events, as decisions do one at a time; whether one asked for a drain.
        func append(_ count: Int) -> Bool {
            var owed = false
            for _ in 0..<count { owed = pipeline.append(Delivery.unheard(.tick("k", .seconds(1)))) == .owingDrain || owed }
            return owed
        }
        #expect(append(1_000))
        // A drain, as the engine runs one: it takes, delivers (meanwhile 500 more are decided),
        // takes again, finds nothing the third time, and ends.
        var (first, _) = Self.begin(&pipeline)
        #expect(first.deliveries.count == 1_000)
        #expect(first.through == 1_000, "every ticket below the thousandth taken")
        let room = first.deliveries.capacity
        #expect(!append(500))
        first.deliveries.removeAll(keepingCapacity: true)
        pipeline.take(into: &first, staying: false)
        #expect(first.deliveries.count == 500 && first.through == 1_500)
        first.deliveries.removeAll(keepingCapacity: true)
        #expect(pipeline.takeOrEnd(into: &first, handedBack: false, at: 3))
        // The next drain: the events decided one at a time (starts) before and while it runs go
        // into the buffers the last one had, with room for a thousand.
        #expect(append(1), "the last drain ended")
        var (second, _) = Self.begin(&pipeline)
        #expect(second.deliveries.count == 1)
        #expect(!append(1))
        #expect(!append(1))
        second.deliveries.removeAll(keepingCapacity: true)
        pipeline.take(into: &second, staying: false)
        #expect(second.deliveries.count == 2)
        #expect(second.deliveries.capacity >= room, "the two events were appended into a buffer grown from empty")
        #expect(pipeline.decided == 1_503)
    }

    @Test("a buffer a backlog grew past the kept capacity is let go of once emptied, not kept for the scheduler's life")
    func backlogBuffersGo() {
        let kept = DeliveryPipeline<Delivery>.keptCapacity
        var pipeline = DeliveryPipeline<Delivery>()
        var owed = false
        for _ in 0..<2 * kept { owed = pipeline.append(Delivery.unheard(.tick("k", .seconds(1)))) == .owingDrain || owed }
        #expect(owed)
        var (batch, _) = Self.begin(&pipeline)
        #expect(batch.deliveries.count == 2 * kept)
        batch.deliveries.removeAll(keepingCapacity: true)
        #expect(!pipeline.takeOrEnd(into: &batch, handedBack: false, at: 4), "a drain holding a backlog's buffer does not end under the lock")
        #expect(batch.holdsOversized, "the backlog's buffer goes to the drain, to let go of after the lock")
        #expect(batch.deliveries.capacity <= kept)
        batch.releaseOversized()
        #expect(pipeline.takeOrEnd(into: &batch, handedBack: false, at: 5))
        // Whatever the pipeline holds now has room for at most the kept capacity.
        _ = pipeline.append(Delivery.unheard(.tick("k", .seconds(1))))
        var (next, _) = Self.begin(&pipeline)
        #expect(next.deliveries.count == 1 && next.deliveries.capacity <= kept)
        next.deliveries.removeAll(keepingCapacity: true)
        // A drain's batch past the kept capacity is not kept either.
        var large = DeliveryBatch<Delivery>()
        large.deliveries.reserveCapacity(2 * kept)
        pipeline.end(keeping: &large, notingGapAt: nil)
        _ = pipeline.append(Delivery.unheard(.tick("k", .seconds(1))))
        let (after, _) = Self.begin(&pipeline)
        #expect(after.deliveries.capacity <= kept)
    }
}

extension Delivery {
    /// A delivery nobody hears, through a gate of its own: for the pipeline's bookkeeping alone.
    static func unheard(_ event: CountdownEvent) -> Self {
        Self(observer: { _ in }, event: event, gate: unheardGate, registration: 0, generation: 0)
    }
}

/// One word, never freed: a test process's eight bytes.
private let unheardGate: DeliveryGate = {
    let word = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: 1)
    word.initialize(to: Atomic(0))
    return DeliveryGate(word: word)
}()
