import Countdown
import Dispatch

/// The task backend with neighbours: an operation-queue scheduler in the same process whose
/// workers sleep through countdowns of their own, each blocking a thread of libdispatch's pool,
/// as an app that still runs the articles' workers would. On Linux Swift concurrency wakes its
/// tasks on that same pool, so what the task backend measures here is the interference.
///
/// Everything but the neighbours is the task scheduler's own; the neighbours end with it.
final class PoolSharingScheduler: CountdownScheduler {
    /// The articles' limit, and the operation-queue backend's default capacity.
    static let neighbours = OperationQueueScheduler.defaultCapacity

    private let tasks: TaskScheduler
    private let sleepers: OperationQueueScheduler

    /// Starts ``neighbours`` operation-queue countdowns of 120 s with 1 s ticks (their workers
    /// asleep nearly all the time), then returns.
    init(tickInterval: Duration, maximumDuration: Duration, deliveryQueue: DispatchQueue?) throws(CountdownError) {
        tasks = try TaskScheduler(tickInterval: tickInterval, maximumDuration: maximumDuration, deliveryQueue: deliveryQueue)
        sleepers = try OperationQueueScheduler(tickInterval: .seconds(1))
        for index in 0..<Self.neighbours {
            try sleepers.start(key: "neighbour-\(index)", duration: OperationQueueScheduler.defaultMaximumDuration) { _ in }
        }
    }

    deinit { sleepers.shutdown() }

    static func profile(maximumDuration: Duration) -> CountdownProfile {
        var profile = TaskScheduler.profile(maximumDuration: maximumDuration)
        profile.variant = variant
        profile.threads += "; beside \(neighbours) sleeping operation-queue workers, each blocking a pool thread"
        return profile
    }

    static let variant = "beside-\(neighbours)-sleepers"

    var profile: CountdownProfile { Self.profile(maximumDuration: tasks.profile.maximumDuration) }
    var tickInterval: Duration { tasks.tickInterval }
    var deliveryQueue: DispatchQueue { tasks.deliveryQueue }

    func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        try tasks.start(key: key, duration: duration, observer: observer)
    }

    func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        tasks.attach(key: key, observer: observer)
    }

    func events(key: String) -> AsyncStream<CountdownEvent> { tasks.events(key: key) }
    func cancel(key: String) -> Bool { tasks.cancel(key: key) }
    func pause(key: String) -> Bool { tasks.pause(key: key) }
    func resume(key: String) -> Bool { tasks.resume(key: key) }
    func remaining(key: String) -> Duration? { tasks.remaining(key: key) }
    var activeKeys: [String] { tasks.activeKeys }
    var activeCount: Int { tasks.activeCount }

    func shutdown() {
        tasks.shutdown()
        sleepers.shutdown()
    }
}
