#if Redis
import CountdownSupport
import Dispatch
import Foundation

/// A thread that sleeps until an instant and runs a step there, which says when to wake next:
/// the ticks' thread of ``LocalWatch``, and the claimer's of the sorted-set strategy. Waking it
/// earlier (``wake()``) makes it run its step now.
final class FleetTicker: Sendable {
    /// What a step answers: sleep until an instant (a monotonic one), until woken, or stop.
    enum Next: Sendable, Equatable {
        case at(Int64)
        case whenWoken
        case stop
    }

    private let signal = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)

    /// Starts the thread, named `name`, running `step` with the monotonic instant now.
    init(name: String, step: @escaping @Sendable (Int64) -> Next) {
        let thread = Thread { [signal, ended] in
            nameCurrentThread(name)
            while true {
                let next = step(Int64(SystemClocks.monotonic()))
                switch next {
                case .stop:
                    ended.signal()
                    return
                case .whenWoken:
                    signal.wait()
                case .at(let instant):
                    _ = signal.wait(timeout: DispatchTime(uptimeNanoseconds: UInt64(max(instant, 0))))
                }
            }
        }
        thread.start()
    }

    /// Runs the step now (or as soon as the one running returns).
    func wake() { signal.signal() }

    /// Waits until the thread has ended (its step answered `.stop`), at most `timeout`.
    func waitForEnd(timeout: Duration) -> Bool {
        let ok = ended.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .success
        if ok { ended.signal() }
        return ok
    }
}
#endif
