import Countdown
import Dispatch

/// A backend with neighbours: an operation-queue scheduler in the same process whose workers
/// sleep through countdowns of their own, each blocking a thread of libdispatch's pool, as an
/// app that still runs the articles' workers would. On Linux Swift concurrency wakes its tasks
/// on that same pool, so beside the task backend this measures the interference; beside a
/// backend whose timers run on serial queues (which libdispatch always gives a thread), it
/// measures that there is none.
///
/// Everything but the neighbours is the inner scheduler's own; the neighbours end with it.
final class PoolSharingScheduler: ForwardingScheduler, @unchecked Sendable {
    /// The articles' limit, and the operation-queue backend's default capacity.
    static let neighbours = OperationQueueScheduler.defaultCapacity

    private let sleepers: OperationQueueScheduler
    private let declared: CountdownProfile

    /// Starts ``neighbours`` operation-queue countdowns of 120 s with 1 s ticks (their workers
    /// asleep nearly all the time) beside `inner`, then returns.
    init(besideSleepers inner: any CountdownScheduler) throws(CountdownError) {
        declared = Self.profile(inner.profile)
        sleepers = try OperationQueueScheduler(tickInterval: .seconds(1))
        for index in 0..<Self.neighbours {
            try sleepers.start(key: "neighbour-\(index)", duration: OperationQueueScheduler.defaultMaximumDuration) { _ in }
        }
        super.init(inner)
    }

    /// `beside-20-sleepers`, after the inner backend's own variant: `continuous+beside-20-sleepers`.
    static let variantSuffix = "beside-\(neighbours)-sleepers"

    /// The inner backend's profile, its variant and threads saying who shares the pool.
    static func profile(_ inner: CountdownProfile) -> CountdownProfile {
        var profile = inner
        profile.variant = CountdownBackend.variant(inner.variant, plus: variantSuffix)
        profile.threads += "; beside \(neighbours) sleeping operation-queue workers, each blocking a pool thread"
        return profile
    }

    override var profile: CountdownProfile { declared }

    override func shutdown() {
        super.shutdown()
        sleepers.shutdown()
    }
}
