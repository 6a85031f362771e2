import CountdownSupport
import Foundation

/// At most ``width`` conformance checks at once in the test process, whoever runs them (the
/// built-in matrix, the broken backends' score). A test waiting for a slot is suspended, not
/// blocked: with one blocked per waiting case, the matrix's 200-odd cases held as many of
/// libdispatch's overcommit threads, the pool reached its cap of about 255, and every
/// backend's deliveries (a serial queue needs a pool thread to run) stalled for seconds.
/// A check that has its slot runs on a thread of its own, outside the pool.
final class CheckSlots: Sendable {
    static let shared = CheckSlots(width: 6)

    private struct State {
        var free: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Locked<State>

    init(width: Int) {
        state = Locked(State(free: width))
    }

    /// Runs `body` on a thread of its own once a slot is free, and returns its result.
    func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
        await acquire()
        defer { release() }
        return await withCheckedContinuation { finished in
            Thread { finished.resume(returning: body()) }.start()
        }
    }

    private func acquire() async {
        await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard state.free == 0 else {
                    state.free -= 1
                    return true
                }
                state.waiting.append(turn)
                return false
            }
            if now { turn.resume() }
        }
    }

    private func release() {
        // The slot passes to the first waiter, resumed after the lock is let go.
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
