import CountdownSupport
import Dispatch
import Testing

@testable import Countdown

/// The driver runs a mechanism's hooks after releasing the table's lock: a hook may call back
/// into the scheduler.
@Suite("KeyedCountdowns", .dedicatedThread)
struct KeyedCountdownsTests {
    /// Arms nothing real; asks the scheduler what it holds from inside `arm`.
    struct CallingBack: CountdownMechanism {
        typealias Progress = DeadlineTrack
        let heard = Locked<[String]>([])

        func now() -> Moment {
            let now = MonotonicInstant.now
            return Moment(monotonic: now, clock: Int64(now.nanoseconds))
        }

        func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant, table: KeyedCountdowns<Self>) -> Int {
            let remaining = table.remaining(key: key), count = table.activeCount
            heard.withLock { $0.append("\(key): \(remaining.map { "\($0 > .zero)" } ?? "nil"), \(count) active") }
            return Int(id.arm)
        }

        func disarm(_ handle: Int) {}
    }

    /// Arms nothing; queues its deliveries (real time) or not (as virtual time does not).
    struct Inert: CountdownMechanism {
        typealias Progress = DeadlineTrack
        let queuesDeliveries: Bool

        func now() -> Moment {
            let now = MonotonicInstant.now
            return Moment(monotonic: now, clock: Int64(now.nanoseconds))
        }

        func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant, table: KeyedCountdowns<Self>) -> Int { 0 }
        func disarm(_ handle: Int) {}
    }

    @Test("a table growing past one chunk of places gets room made ahead: from a thread of the pool in real time, at once in virtual time", arguments: [true, false])
    func roomIsMadeAhead(queuesDeliveries: Bool) throws {
        let table = KeyedCountdowns(
            settings: try SchedulerSettings(
                tickInterval: .seconds(1), maximumDuration: .seconds(60), capacity: nil, deliveryQueue: nil, label: "test.room"),
            mechanism: Inert(queuesDeliveries: queuesDeliveries))
        defer { table.shutdown() }
        let chunk = ChunkedArray<Int>.chunkSize
        for index in 0..<chunk { _ = try table.start(key: "room-ahead:user:\(index)", duration: .seconds(60), observer: { _ in }) }
        #expect(!table.holdsRoomAhead, "one chunk: nothing asked for")
        _ = try table.start(key: "room-ahead:user:\(chunk)", duration: .seconds(60), observer: { _ in })
        // A watchdog, not a timing: the pool's thread makes the room whenever it runs.
        #expect(waitUntil(timeout: .seconds(20)) { table.holdsRoomAhead },
                "the second chunk began: room for a third was made and handed over")
        #expect(table.activeCount == chunk + 1)
    }

    @Test("a mechanism whose arm calls remaining(key:) and activeCount completes")
    func armMayCallBack() throws {
        let mechanism = CallingBack()
        let table = KeyedCountdowns(
            settings: try SchedulerSettings(
                tickInterval: .seconds(1), maximumDuration: .seconds(60), capacity: nil, deliveryQueue: nil, label: "test.calling-back"),
            mechanism: mechanism)
        let done = DispatchSemaphore(value: 0)
        let worker = DispatchQueue(label: "test.calling-back.caller")
        worker.async {
            _ = try? table.start(key: "k", duration: .seconds(10), observer: { _ in })
            _ = table.pause(key: "k")
            _ = table.resume(key: "k")
            _ = table.cancel(key: "k")
            table.shutdown()
            done.signal()
        }
        // A deadlock would hang here: the watchdog fails the test instead.
        #expect(done.wait(timeout: .now() + 20) == .success, "start, pause, resume and cancel returned")
        #expect(mechanism.heard.withLock { $0 } == ["k: true, 1 active", "k: true, 1 active"], "armed at the start and at the resume")
    }
}
