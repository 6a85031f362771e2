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
