import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `shutdown` check: shutdown cancels everything, silences observers, refuses starts; a released scheduler ends its threads.
enum ShutdownCheck {
    static let check = ConformanceCheck(
        "shutdown", .contract,
        "shutdown cancels everything, silences observers, refuses starts; a released scheduler ends its threads",
        body: run)

    static func run(_ c: CheckContext) throws {
        // Threads that appear while this scheduler is made and first used are its own. Named
        // apart, this thread passes its name to threads the backend starts and does not name.
        nameCurrentThread("cf-shutdown")
        var harness: Harness?
        var ownThreads: Set<Int> = []
        try OSThreads.creation.withLock { _ throws in
            let before = OSThreads.current()
            harness = try c.makeSchedulerUnlocked(tick: .milliseconds(10))
            ownThreads = OSThreads.started(since: before)
        }
        guard harness != nil else { return }
        let released = try exerciseShutdown(harness!, in: c)
        // Released, the scheduler must go away and take the threads it started with it.
        c.release(harness!.scheduler)
        harness = nil
        c.expect(waitUntil(timeout: .seconds(3)) { !released.isAlive },
                 "the scheduler is still referenced after shutdown and release")
        let leftover = OSThreads.waitForExit(ownThreads, timeout: .seconds(5))
        c.expect(leftover.isEmpty,
                 "threads the scheduler started still run 5 s after shutdown: \(leftover.joined(separator: ", "))")
        if OSThreads.current() == nil {
            c.figure("threads not observable here (no /proc): only the release of the scheduler was checked")
        } else {
            c.figure("\(ownThreads.count) thread(s) of its own, \(leftover.count) left after shutdown")
        }
    }

    /// Shuts `h` down with countdowns running, paused and queued; returns a weak reference to it.
    private static func exerciseShutdown(_ h: Harness, in c: CheckContext) throws -> WeakScheduler {
        let logs = (0..<5).map { _ in h.recorder() }
        for (i, log) in logs.enumerated() {
            try h.scheduler.start(key: "k\(i)", duration: .seconds(5), observer: log.observer)
        }
        c.expect(h.scheduler.pause(key: "k0"), "pause returned false")
        _ = logs[1].wait { $0.count >= 3 }
        let counts = h.queue.holding {
            let counts = logs.map(\.count)
            settle(.milliseconds(50))  // ticks queue up behind the hold
            h.scheduler.shutdown()
            return counts
        }
        h.scheduler.shutdown()  // idempotent
        c.expectEqual(h.scheduler.activeCount, 0, "activeCount", "after shutdown")
        do {
            let outcome = try h.scheduler.start(key: "late", duration: .seconds(1)) { _ in }
            c.fail("start after shutdown returned \(outcome)")
        } catch {
            c.expect(error == .shutDown, "start after shutdown threw \(error), not shutDown")
        }
        settle(.milliseconds(100))
        h.queue.drain()
        c.expect(logs.map(\.count) == counts, "events after shutdown: \(zip(logs.map(\.count), counts).map { $0 - $1 })")
        c.expect(logs.allSatisfy { $0.finishes.isEmpty }, "a countdown finished after shutdown")
        return WeakScheduler(h.scheduler)
    }
}
