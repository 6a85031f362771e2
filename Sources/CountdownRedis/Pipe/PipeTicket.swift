#if Redis
import CountdownSupport
import Dispatch

/// The answers to requests submitted together on a ``RedisPipe``, in their order: awaited by a
/// task (it suspends; no thread waits) or by a thread (it blocks on a semaphore), the same
/// machinery either way. Completed once, by the pipe's thread, when the last answer came.
final class PipeTicket: Sendable {
    typealias Answers = [Result<RedisReply, RedisFailure>]

    private enum State {
        case pending
        case awaited(CheckedContinuation<Answers, Never>)
        case waited(DispatchSemaphore)
        case done(Answers)
    }

    private let state = Locked(State.pending)
    /// Filled by the pipe's thread only, one answer per request, before ``complete()``.
    private let answers: Locked<(filled: Int, slots: [Result<RedisReply, RedisFailure>?])>

    init(count: Int) {
        answers = Locked((0, Array(repeating: nil, count: count)))
    }

    /// The answer to request `index`; true when it was the last one missing.
    func answer(_ index: Int, _ result: Result<RedisReply, RedisFailure>) -> Bool {
        answers.withLock { a in
            if a.slots[index] == nil { a.filled += 1 }
            a.slots[index] = result
            return a.filled == a.slots.count
        }
    }

    /// Every answer is in: whoever waits is woken.
    func complete() {
        let all = answers.withLock { $0.slots.map { $0! } }
        let waiter = state.withLock { s -> State in
            let was = s
            s = .done(all)
            return was
        }
        switch waiter {
        case .awaited(let continuation): continuation.resume(returning: all)
        case .waited(let semaphore): semaphore.signal()
        case .pending, .done: break
        }
    }

    /// The answers, suspending the task until they come.
    var value: Answers {
        get async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Answers, Never>) in
                let ready = state.withLock { s -> Answers? in
                    if case .done(let all) = s { return all }
                    s = .awaited(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }

    /// The answers, blocking the calling thread until they come: for threads that are not the
    /// cooperative pool's.
    func wait() -> Answers {
        let semaphore = DispatchSemaphore(value: 0)
        let ready = state.withLock { s -> Answers? in
            if case .done(let all) = s { return all }
            s = .waited(semaphore)
            return nil
        }
        if let ready { return ready }
        semaphore.wait()
        return state.withLock { s -> Answers in
            guard case .done(let all) = s else { preconditionFailure("a ticket woken before its answers") }
            return all
        }
    }
}
#endif
