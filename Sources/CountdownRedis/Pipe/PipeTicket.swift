#if Redis
import CountdownSupport
import Dispatch

/// The answers to requests submitted together on a ``RedisPipe``, in their order: awaited by a
/// task (it suspends; no thread waits) or by a thread (it blocks on a semaphore), the same
/// machinery either way. Filled by the pipe's thread; complete once the last answer came.
final class PipeTicket: Sendable {
    typealias Answers = [Result<RedisReply, RedisFailure>]

    private enum Waiter {
        case task(CheckedContinuation<Answers, Never>)
        case thread(DispatchSemaphore)
    }

    private struct State {
        var slots: [Result<RedisReply, RedisFailure>?]
        var filled = 0
        var waiter: Waiter?
        var all: Answers? { filled == slots.count ? slots.map { $0! } : nil }
    }

    /// One lock for the answers and whoever waits: taken once per answer.
    private let state: Locked<State>

    init(count: Int) {
        state = Locked(State(slots: Array(repeating: nil, count: count)))
    }

    /// The answer to request `index`: once it is the last one missing, whoever waits is woken.
    func answer(_ index: Int, _ result: Result<RedisReply, RedisFailure>) {
        let woken = state.withLock { s -> (Waiter, Answers)? in
            if s.slots[index] == nil { s.filled += 1 }
            s.slots[index] = result
            guard let waiter = s.waiter, let all = s.all else { return nil }
            s.waiter = nil
            return (waiter, all)
        }
        switch woken {
        case (.task(let continuation), let all)?: continuation.resume(returning: all)
        case (.thread(let semaphore), _)?: semaphore.signal()
        case nil: break
        }
    }

    /// Whether every answer is in.
    var isComplete: Bool { state.withLock { $0.filled == $0.slots.count } }

    /// The answers, suspending the task until they come.
    var value: Answers {
        get async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Answers, Never>) in
                let ready = state.withLock { s -> Answers? in
                    if let all = s.all { return all }
                    s.waiter = .task(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    /// The answers, blocking the calling thread until they come: for threads that are not the
    /// cooperative pool's. Through ``RedisPipe/wait(_:)``, which drives the connection when
    /// nobody does (a ticket of ``RedisPipe/submitWaiting(_:)`` waited for here alone would wait
    /// for a driver that was never woken).
    func wait() -> Answers {
        let semaphore = DispatchSemaphore(value: 0)
        let ready = state.withLock { s -> Answers? in
            if let all = s.all { return all }
            s.waiter = .thread(semaphore)
            return nil
        }
        if let ready { return ready }
        semaphore.wait()
        return state.withLock { s -> Answers in
            guard let all = s.all else { preconditionFailure("a ticket woken before its answers") }
            return all
        }
    }
}
#endif
