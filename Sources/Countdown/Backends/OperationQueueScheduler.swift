import Dispatch
import Foundation

/// Strategy 2: one `Operation` per countdown on an `OperationQueue`, looping
/// deliver → sleep one tick → decrement, as the articles built it.
///
/// Each countdown blocks a thread for its whole life, and each sleep is relative to the
/// moment the worker woke, so the countdown drifts by every wake-up's lateness. On Linux
/// the queue's thread pool grows about one thread a second while its threads are blocked, so
/// with many countdowns the later workers start late. Capacity is declared (the articles
/// capped it at 20) and `start` beyond it throws instead of dropping the request.
///
/// The worker sleeps on a semaphore rather than in `Thread.sleep`, so that `pause` really
/// pauses it and `cancel` ends it at once instead of after the rest of a long sleep.
public final class OperationQueueScheduler: KeyedCountdownScheduler, EngineBacked, Sendable {
    /// The articles' limits: 20 concurrent countdowns of at most 120 s.
    public static let defaultCapacity = 20
    /// The articles' longest countdown: 120 s.
    public static let defaultMaximumDuration: Duration = .seconds(120)

    public let profile: CountdownProfile
    let engine: CountdownEngine<OperationQueueMechanism>

    /// - Parameters:
    ///   - tickInterval: `T`, how often a running countdown ticks, at least ``CountdownLimits/minimumTickInterval``.
    ///   - capacity: the most countdowns at once; also the queue's
    ///     `maxConcurrentOperationCount`, so every accepted countdown can have its worker.
    ///   - maximumDuration: the longest countdown `start` accepts; a longer one throws (the articles' 120 s by default).
    ///   - deliveryQueue: the serial queue every observer runs on (the main queue for an app's UI); nil: a queue of its own.
    public init(
        tickInterval: Duration = .seconds(1),
        capacity: Int = OperationQueueScheduler.defaultCapacity,
        maximumDuration: Duration = OperationQueueScheduler.defaultMaximumDuration,
        deliveryQueue: DispatchQueue? = nil
    ) throws(CountdownError) {
        let settings = try SchedulerSettings(
            tickInterval: tickInterval, maximumDuration: maximumDuration, capacity: capacity,
            deliveryQueue: deliveryQueue, label: "countdown.operation-queue")
        let queue = OperationQueue()
        queue.name = "countdown.operation-queue.workers"
        queue.maxConcurrentOperationCount = capacity
        engine = CountdownEngine(
            settings: settings, mechanism: OperationQueueMechanism(tick: tickInterval, queue: queue))
        profile = Self.profile(capacity: capacity, maximumDuration: maximumDuration)
    }

    deinit { engine.shutdown() }

    /// What a scheduler made with these arguments declares, without making one: `capacity`, `maximumDuration` as its initializer takes them.
    public static func profile(
        capacity: Int = OperationQueueScheduler.defaultCapacity,
        maximumDuration: Duration = OperationQueueScheduler.defaultMaximumDuration
    ) -> CountdownProfile {
        CountdownProfile(
            name: "operation-queue",
            mechanism: "one Operation per countdown looping deliver → sleep one tick → decrement",
            threads: "one blocked pool thread per countdown (the pool grows ~1 thread/s on Linux)",
            suspension: .finishesLateByFreeze,
            wallClockJump: .immune,
            drift: .accumulates,
            capacity: capacity,
            maximumDuration: maximumDuration)
    }

    var operationQueue: OperationQueue { engine.mechanism.queue }
}

struct OperationQueueMechanism: CountdownMechanism {
    let tick: Duration
    let queue: OperationQueue

    /// Wakes a sleeping worker when its countdown is paused, resumed or ended.
    final class Worker: Sendable {
        let wakeUp = DispatchSemaphore(value: 0)
    }

    typealias Progress = TickCount

    var arming: ArmingStyle { .worker }

    func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant, engine: CountdownEngine<Self>) -> Worker {
        let worker = Worker()
        let operation = BlockOperation { [weak engine] in
            // The table decides; the worker only sleeps. Each fire is relative to the moment
            // this thread woke (TickCount restarts its interval there), as a sleep loop is.
            while let step = engine?.workerStep(id) {
                switch step {
                case .exit: return
                case .waitForResume: worker.wakeUp.wait()
                case .sleep(let until): _ = worker.wakeUp.wait(timeout: until.dispatchTime)
                }
            }
        }
        operation.name = key
        queue.addOperation(operation)
        return worker
    }

    func disarm(_ worker: Worker) { worker.wakeUp.signal() }

    /// The worker lives as long as its countdown: woken at a pause, it finds the countdown
    /// paused and waits for the wake-up of a resume.
    func wake(_ worker: Worker) { worker.wakeUp.signal() }

    func shutdown() { queue.cancelAllOperations() }
}
