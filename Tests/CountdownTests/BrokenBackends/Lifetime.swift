@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Synchronization
import Testing

// Aimed at `observer-release`, `shutdown` and `release`: what a backend lets go of.

final class KeepsObservers: Forwarding, @unchecked Sendable {
    private let kept = Locked<[CountdownObserver]>([])

    override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
        kept.withLock { $0.append(observer) }
        return observer
    }
}

/// Starts a thread that never ends.
final class LeaksThread: Forwarding, @unchecked Sendable {
    override init(_ inner: any CountdownScheduler) {
        super.init(inner)
        let thread = Thread {
            nameCurrentThread("leaky-ticker")
            // Bounded, so the test process is not kept busy for ever: long past the check's wait.
            for _ in 0..<600 { Thread.sleep(forTimeInterval: 0.1) }
        }
        thread.start()
    }
}

/// Its thread ends on `shutdown()`, but not when the scheduler is only released.
final class ThreadOutlivesRelease: Forwarding, @unchecked Sendable {
    /// The thread holds only this flag, not the scheduler, so the scheduler itself does go away.
    private final class Flag: Sendable {
        let stopped = Atomic<Bool>(false)
    }
    private let flag = Flag()

    override init(_ inner: any CountdownScheduler) {
        super.init(inner)
        let flag = flag
        let thread = Thread {
            nameCurrentThread("outlives-release")
            // Bounded, so the test process is not kept busy for ever.
            for _ in 0..<600 where !flag.stopped.load(ordering: .relaxed) { Thread.sleep(forTimeInterval: 0.05) }
        }
        thread.start()
    }

    override func shutdown() {
        flag.stopped.store(true, ordering: .relaxed)
        super.shutdown()
    }
}
