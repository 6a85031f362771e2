#if Redis
import Countdown
import CountdownSupport

/// What a member's own threads (each shard's claimer and inbox reader, the keyspace subscriber)
/// met when Redis refused or failed them. No call of the caller's sees these: a claim refused
/// leaves countdowns unfinished, an inbox refused leaves replaced observers ticking. So they are
/// kept here, shown by ``RedisCountdownScheduler/lastBackgroundFailure``, and each thread backs
/// off while they last (at most ten tries a second).
final class BackgroundFailures: Sendable {
    private let state = Locked<(last: CountdownError?, count: Int)>((nil, 0))

    /// `thread` (its job, and the command it sent) failed with `failure`.
    func record(_ failure: RedisFailure, in thread: String) {
        let error: CountdownError
        switch failure.countdownError {
        case .unavailable(let reason, let text): error = .unavailable(reason, "\(thread): \(text)")
        case let other: error = other
        }
        state.withLock { $0 = (error, $0.count + 1) }
    }

    var last: CountdownError? { state.withLock { $0.last } }
    var count: Int { state.withLock { $0.count } }
}
#endif
