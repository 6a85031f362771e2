import CountdownSupport
import Dispatch
import Foundation

/// The runtime's timer for one ``WakeUpTarget``: in the system's world a thread of its own that
/// sleeps until the target's next wake-up and runs it on the delivery queue; in virtual time,
/// nothing of its own (the ``VirtualWorld`` keeps the target, and `advance` runs its wake-ups).
/// Made before its target (``EngineRuntime/makeWakeUpTimer()``), started once the target is
/// (``EngineRuntime/startWakeUps(_:for:named:)``).
struct WakeUpTimer: Sendable {
    /// Wakes the thread before its time; nil in virtual time, which has no thread to wake.
    let nudger: DispatchSemaphore?

    /// The target decided an earlier wake-up, or stopped: the thread looks again. Called after
    /// the target's lock is released.
    func nudge() { nudger?.signal() }

    /// The thread's loop. It holds the target weakly, and strongly only while it reads the next
    /// wake-up or runs one: a scheduler released without a shutdown takes its target with it,
    /// whose `deinit` nudges the thread to end.
    ///
    /// The thread runs each wake-up on the delivery queue with `sync`, which libdispatch runs on
    /// the calling thread when the queue is idle: a wake-up is one thread woken. A dispatch
    /// timer targeting the queue costs two on Linux: libdispatch's manager thread wakes for the
    /// timer, then wakes a worker for the queue (measured here: about 20 µs of CPU each; at a
    /// million countdowns, switching threads was 41 % of the delivery side's time). With the
    /// main queue as the delivery queue, the thread waits for the main thread to run the
    /// wake-up, as a timer's handler would.
    static func run<Target: WakeUpTarget>(
        _ target: WeakBox<Target>, nudger: DispatchSemaphore, queue: DispatchQueue, name: String
    ) {
        // Named from inside, through pthread: corelibs ignores a name set before `start()`.
        nameCurrentThread(name)
        // One work item for every wake-up, made once: `sync` with a closure goes through the
        // overlay's generic helper, which allocates and looks up generic metadata on every
        // call (about 2 500 instructions a wake-up in callgrind's profile, and as many cold
        // cache lines after a sleep); a work item's block is made once and run each time.
        let wakeUp = DispatchWorkItem { target.value?.wakeUp() }
        while true {
            guard let next = target.value?.nextWakeUp else { return }
            switch next {
            case .at(let instant) where MonotonicInstant.now < instant: _ = nudger.wait(timeout: instant.dispatchTime)
            case .at: queue.sync(execute: wakeUp)
            case .idle: nudger.wait()
            case .stopped: return
            }
        }
    }
}
