import CountdownSupport
import CoreFoundation
import Dispatch
import Foundation
import Synchronization

/// A dedicated thread running its own `RunLoop` until ``stop()``.
///
/// `@unchecked Sendable` because `RunLoop` and `Timer` are not annotated. The only thing done
/// to them from other threads is adding and invalidating timers, which go to
/// `CFRunLoopAddTimer` and `CFRunLoopTimerInvalidate`: both lock the run loop and wake it.
/// Everything else is set before `init` returns and never changed.
final class RunLoopThread: @unchecked Sendable {
    /// At most 15 characters: Linux refuses longer thread names (the thread keeps the process name).
    static let threadName = "countdown-loop"

    private let thread: Thread
    private var runLoop: RunLoop!
    /// A run loop with no timer returns at once; this one keeps it alive between countdowns.
    private var keepAlive: Timer!
    private let stopRequested = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)

    init() {
        let ready = DispatchSemaphore(value: 0)
        let box = WeakBox<RunLoopThread>()
        thread = Thread {
            box.value?.run(ready: ready)
        }
        box.set(self)
        thread.start()
        ready.wait()
    }

    private func run(ready: DispatchSemaphore) {
        // Named from inside, through pthread: corelibs ignores a name set before `start()`, and
        // the thread would keep its creator's name (a libdispatch worker's, often).
        nameCurrentThread(Self.threadName)
        runLoop = RunLoop.current
        keepAlive = Timer(fire: .distantFuture, interval: 0, repeats: false) { _ in }
        runLoop.add(keepAlive, forMode: .common)
        running.store(true, ordering: .releasing)
        ready.signal()
        // `run(mode:before:)` returns when `stop()` stops the loop, or at the limit; the limit
        // only bounds how long a missed stop could go unnoticed.
        let loop = runLoop!
        while !stopRequested.load(ordering: .acquiring) {
            _ = loop.run(mode: .default, before: Date(timeIntervalSinceNow: 60))
        }
        running.store(false, ordering: .releasing)
        exited.signal()
    }

    /// Whether the thread is still running its loop.
    var isRunning: Bool { running.load(ordering: .acquiring) }

    /// Whether the OS thread itself has ended (a moment after the loop).
    var isFinished: Bool { thread.isFinished }

    func add(_ timer: Timer) {
        runLoop.add(timer, forMode: .common)
    }

    /// Ends the thread and waits (up to a few seconds) until it has. Timers still in the loop
    /// never fire again, and go with the loop.
    func stop() {
        guard !stopRequested.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // A timer due now wakes the loop and stops it from inside; `run` returns at once,
        // however many timers are left in it.
        add(Timer(fire: Date(), interval: 0, repeats: false) { [self] _ in
            keepAlive.invalidate()
            CFRunLoopStop(CFRunLoopGetCurrent())
        })
        guard Thread.current != thread else { return }
        _ = exited.wait(timeout: .now() + .seconds(5))
    }
}
