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
        nameCurrentThread("cf-shutdown")
        var harness: Harness?
        let ownThreads: Set<Int>
        (harness, ownThreads) = try c.makeSchedulerWatchingThreads(tick: .milliseconds(10))
        guard harness != nil else { return }
        let released = try exerciseShutdown(harness!, in: c)
        // Released, the scheduler must go away and take the threads it started with it.
        c.release(harness!.scheduler)
        harness = nil
        c.expect(realTimeWait(timeout: .seconds(3)) { !released.isAlive },
                 "the scheduler is still referenced after shutdown and release")
        c.expectThreadsEnded(ownThreads, after: "shutdown and release")
    }

    /// Shuts `h` down with countdowns running, paused and queued; returns a weak reference to it.
    private static func exerciseShutdown(_ h: Harness, in c: CheckContext) throws -> WeakScheduler {
        let logs = (0..<5).map { _ in h.recorder() }
        for (i, log) in logs.enumerated() {
            try h.scheduler.start(key: "k\(i)", duration: h.longCountdown, observer: log.observer)
        }
        c.expect(h.scheduler.pause(key: "k0"), "pause returned false")
        _ = logs[1].wait { $0.count >= 3 }
        let counts = h.holding {
            let counts = logs.map(\.count)
            h.settle(.milliseconds(50))  // ticks queue up behind the hold
            h.scheduler.shutdown()
            return counts
        }
        h.scheduler.shutdown()  // idempotent
        c.expectEqual(h.scheduler.activeCount, 0, "activeCount", "after shutdown")
        do {
            let outcome = try h.scheduler.start(key: "late", duration: .seconds(1), observer: h.ignoring("start"))
            c.fail("start after shutdown returned \(outcome)")
        } catch {
            c.expect(error == .shutDown, "start after shutdown threw \(error), not shutDown")
        }
        h.settle(.milliseconds(100))
        h.drain()
        c.expect(logs.map(\.count) == counts, "events after shutdown: \(zip(logs.map(\.count), counts).map { $0 - $1 })")
        c.expect(logs.allSatisfy { $0.finishes.isEmpty }, "a countdown finished after shutdown")
        return WeakScheduler(h.scheduler)
    }
}
