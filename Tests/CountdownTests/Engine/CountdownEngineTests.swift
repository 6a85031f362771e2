import CountdownSupport
import Dispatch
import Foundation
import Testing

@testable import Countdown

/// The engine's delivery side, driven in virtual time: the same code users run (the drain's
/// linger and turn, the store gate, the room made ahead), with the world's jobs run one list at
/// a time so that a test looks between the steps. Each test fails when the behaviour it names
/// is taken out of the engine (the note of issue 42 says which were taken out, and how).
@Suite("Countdown engine in virtual time", .timeLimit(.minutes(1)))
struct CountdownEngineTests {
    /// What observers heard, in order, and markers of jobs queued beside them.
    final class Heard: Sendable {
        private let lines = Locked<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
        func observer(_ then: (@Sendable (CountdownEvent) -> Void)? = nil) -> CountdownObserver {
            { event in
                self.append("\(event.key) \(event.kind == .finished ? "finished" : "tick")")
                then?(event)
            }
        }
    }

    /// A clock far from its origin: the first drain is not taken for one that follows another.
    static let origin = Duration.seconds(100)

    // MARK: - The drain's linger

    @Test("a drain queued right after another lingers: what is decided while it sleeps is delivered by it, with no drain queued again")
    func drainLingersInADenseStream() throws {
        let s = try VirtualScheduler(now: Self.origin)
        let heard = Heard()
        try s.start(key: "rate-limit:user:00000001", duration: .seconds(10), observer: heard.observer())
        s.settle()  // one drain; it ends, and the stream's next drain is dense
        #expect(s.world.ran(.delivery) == 1)

        let sleeps = Locked(0)
        s.world.onSleep { [weak s] _ in
            // Another thread starts a countdown while the drain sleeps to let events gather.
            let first = sleeps.withLock { count in count += 1; return count == 1 }
            if first { _ = try? s?.start(key: "rate-limit:user:00000003", duration: .seconds(10), observer: heard.observer()) }
        }
        try s.start(key: "rate-limit:user:00000002", duration: .seconds(10), observer: heard.observer())
        #expect(s.world.waiting(.delivery) == 1)
        s.settle()
        #expect(heard.all == ["rate-limit:user:00000001 tick", "rate-limit:user:00000002 tick", "rate-limit:user:00000003 tick"])
        #expect(sleeps.withLock { $0 } == 2, "slept once, found the third start's tick, slept again and found nothing")
        #expect(s.world.ran(.delivery) == 2, "the third start's tick rode the lingering drain: no drain of its own")
    }

    @Test("a drain after a gap in the stream does not linger: it ends when it has delivered")
    func drainAfterAGapDoesNotLinger() throws {
        let s = try VirtualScheduler(now: Self.origin)
        let heard = Heard()
        try s.start(key: "rate-limit:user:00000001", duration: .seconds(10), observer: heard.observer())
        s.settle()
        s.world.elapse(.milliseconds(1))
        let sleeps = Locked(0)
        s.world.onSleep { _ in sleeps.withLock { $0 += 1 } }
        try s.start(key: "rate-limit:user:00000002", duration: .seconds(10), observer: heard.observer())
        s.settle()
        #expect(heard.all.count == 2)
        #expect(sleeps.withLock { $0 } == 0)
    }

    // MARK: - The turn

    /// `a`'s observer is slow (`slow` passes), starts `b`, and something else is queued on the
    /// delivery queue meanwhile (an app's own work); `b`'s observer starts `c`, decided after a
    /// drain that handed the queue back would have ended. What was heard, in order, and how
    /// many jobs of the delivery queue ran.
    func turnScenario(slow: Duration) throws -> (heard: [String], drains: Int) {
        let s = try VirtualScheduler(now: Self.origin)
        let heard = Heard()
        let world = s.world
        let b: CountdownObserver = heard.observer { [weak s] event in
            guard event.kind == .tick, event.remaining == .seconds(10) else { return }
            _ = try? s?.start(key: "c", duration: .seconds(10), observer: heard.observer())
        }
        try s.start(key: "a", duration: .seconds(10), observer: heard.observer { [weak s] event in
            guard event.kind == .tick, event.remaining == .seconds(10) else { return }
            world.elapse(slow)
            _ = try? s?.start(key: "b", duration: .seconds(10), observer: b)
            world.enqueue(.delivery) { heard.append("queued work") }
        })
        s.settle()
        return (heard.all, s.world.ran(.delivery))
    }

    @Test("a drain that held the queue for a turn hands it back: a job queued meanwhile runs before what is decided after")
    func drainHandsTheQueueBackAfterATurn() throws {
        let (heard, drains) = try turnScenario(slow: .microseconds(600))
        #expect(heard == ["a tick", "b tick", "queued work", "c tick"])
        #expect(drains == 3, "the first drain, the queued work, the drain queued at the turn")
    }

    @Test("a drain within its turn keeps the queue: what is decided while it runs is delivered before a job queued meanwhile")
    func drainKeepsTheQueueWithinATurn() throws {
        let (heard, _) = try turnScenario(slow: .microseconds(100))
        #expect(heard == ["a tick", "b tick", "c tick", "queued work"])
    }

    // MARK: - The store gate

    @Test("a finish waits for the write that takes its countdown out of the file, and is delivered once it is written")
    func finishWaitsForItsWrite() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("engine-gate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let s = try VirtualScheduler(now: Self.origin)
        let store = s.store(path: directory.appendingPathComponent("countdowns").path)
        try s.restore(from: store)
        let heard = Heard()
        let key = "sms-code:+8613800138000"
        try s.start(key: key, duration: .seconds(1), observer: heard.observer())
        s.settle()
        #expect(try store.read().map(\.key) == [key])

        #expect(s.fireEarliest(through: (Self.origin + .seconds(1)).nanoseconds), "the finish is due")
        #expect(heard.all == ["\(key) tick"], "held: the file still holds the countdown")
        #expect(s.world.waiting(.write) == 1, "the write it waits for is queued")
        #expect(s.remaining(key: key) == nil, "the key is free already")

        #expect(s.world.run(.write) >= 1)
        #expect(try store.read().isEmpty, "written: the file no longer holds it")
        #expect(heard.all == ["\(key) tick"], "delivered by a drain the write queued, not by the write")
        #expect(s.world.waiting(.delivery) == 1)
        s.settle()
        #expect(heard.all == ["\(key) tick", "\(key) finished"])
        s.shutdown()
    }

    // MARK: - Room made ahead

    @Test("a table growing past one chunk of places asks for room ahead, made off the caller's path and handed over")
    func roomIsMadeAhead() throws {
        let s = try VirtualScheduler(now: Self.origin)
        let chunk = ChunkedArray<Int>.chunkSize
        for index in 0..<chunk {
            try s.start(key: "room-ahead:user:\(index)", duration: .seconds(60), observer: { _ in })
        }
        #expect(!s.engine.holdsRoomAhead)
        #expect(s.world.waiting(.background) == 0, "one chunk: nothing asked for")
        try s.start(key: "room-ahead:user:\(chunk)", duration: .seconds(60), observer: { _ in })
        #expect(s.world.waiting(.background) == 1, "the second chunk began: room for a third is asked for")
        #expect(!s.engine.holdsRoomAhead, "not made on the caller's path")
        #expect(s.world.run(.background) == 1)
        #expect(s.engine.holdsRoomAhead, "made and handed over")
        #expect(s.activeCount == chunk + 1)
    }

    @Test("room is made ahead in real time too, on a thread of its own")
    func roomIsMadeAheadInRealTime() throws {
        let s = try TimestampScheduler(tickInterval: .seconds(1), clock: .continuous)
        defer { s.shutdown() }
        let chunk = ChunkedArray<Int>.chunkSize
        for index in 0...chunk {
            try s.start(key: "room-ahead:user:\(index)", duration: .seconds(60), observer: { _ in })
        }
        // A watchdog, not a timing: the thread makes the room whenever it runs.
        #expect(waitUntil(timeout: .seconds(20)) { s.engine.holdsRoomAhead })
    }

    // MARK: - Hooks may call back

    /// Arms nothing real; asks the scheduler what it holds from inside `arm`.
    struct CallingBack: CountdownMechanism {
        typealias Progress = DeadlineTrack
        let heard = Locked<[String]>([])
        var arming: ArmingStyle { .timerPerCountdown(shutdown: .disarmEach) }

        func now() -> Moment {
            let now = MonotonicInstant.now
            return Moment(monotonic: now, clock: Int64(now.nanoseconds))
        }

        func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant, engine: CountdownEngine<Self>) -> Int {
            let remaining = engine.remaining(key: key), count = engine.activeCount
            heard.withLock { $0.append("\(key): \(remaining.map { "\($0 > .zero)" } ?? "nil"), \(count) active") }
            return Int(id.arm)
        }

        func disarm(_ handle: Int) {}
    }

    @Test("a mechanism whose arm calls remaining(key:) and activeCount completes")
    func armMayCallBack() throws {
        let mechanism = CallingBack()
        let settings = try SchedulerSettings(
            tickInterval: .seconds(1), maximumDuration: .seconds(60), capacity: nil, deliveryQueue: nil, label: "test.calling-back")
        let engine = CountdownEngine(settings: settings, mechanism: mechanism, runtime: .virtual(VirtualWorld(), deliveryQueue: settings.deliveryQueue))
        let done = DispatchSemaphore(value: 0)
        DispatchQueue(label: "test.calling-back.caller").async {
            _ = try? engine.start(key: "k", duration: .seconds(10), observer: { _ in })
            _ = engine.pause(key: "k")
            _ = engine.resume(key: "k")
            _ = engine.cancel(key: "k")
            engine.shutdown()
            done.signal()
        }
        // A deadlock would hang here: the watchdog fails the test instead.
        #expect(done.wait(timeout: .now() + 20) == .success, "start, pause, resume and cancel returned")
        #expect(mechanism.heard.withLock { $0 } == ["k: true, 1 active", "k: true, 1 active"], "armed at the start and at the resume")
    }
}
