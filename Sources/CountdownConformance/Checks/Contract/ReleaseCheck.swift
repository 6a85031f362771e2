import Countdown
import CountdownSupport
import Foundation

/// The `release` check: releasing the last reference alone, with no `shutdown()` anywhere,
/// ends the scheduler's threads and frees every observer.
enum ReleaseCheck {
    static let check = ConformanceCheck(
        "release", .contract,
        "released without shutdown(): the scheduler goes away, its threads end, its observers are freed",
        body: run)

    static func run(_ c: CheckContext) throws {
        nameCurrentThread("cf-release")
        var harness: Harness?
        var ownThreads: Set<Int> = []
        try OSThreads.creation.withLock { _ throws in
            let before = OSThreads.current()
            harness = try c.makeSchedulerUnlocked(tick: .milliseconds(10))
            ownThreads = OSThreads.started(since: before)
        }
        guard harness != nil else { return }
        // Never shut down: the check's own clean-up must not do it either.
        c.release(harness!.scheduler)
        let (scheduler, watched, queue) = try exercise(harness!, in: c)
        harness = nil
        c.expect(waitUntil(timeout: .seconds(3)) { !scheduler.isAlive },
                 "the scheduler is still referenced 3 s after its last reference was released")
        queue.drain()
        c.expect(waitUntil(timeout: .seconds(3)) { watched.allSatisfy { !$0.isAlive } },
                 "\(watched.filter(\.isAlive).count) of 3 observers still referenced after the scheduler was released")
        let leftover = OSThreads.waitForExit(ownThreads, timeout: .seconds(5))
        c.expect(leftover.isEmpty,
                 "threads the scheduler started still run 5 s after it was released (never shut down): \(leftover.joined(separator: ", "))")
        if OSThreads.current() == nil {
            c.figure("threads not observable here (no /proc): only the release of the scheduler and its observers was checked")
        } else {
            c.figure("\(ownThreads.count) thread(s) of its own, \(leftover.count) left after release")
        }
    }

    /// Starts countdowns running and paused on `h`, with observers the check can watch; returns
    /// weak references, so that nothing here keeps the scheduler.
    private static func exercise(_ h: Harness, in c: CheckContext) throws -> (WeakScheduler, [Watched], DeliveryQueue) {
        var watched: [Watched] = []
        for (key, pause) in [("running", false), ("paused", true), ("ticking", false)] {
            let token = Token()
            try h.scheduler.start(key: key, duration: .seconds(30)) { _ in _ = token }
            if pause { c.expect(h.scheduler.pause(key: key), "pause returned false") }
            watched.append(Watched(token))
        }
        settle(.milliseconds(50))
        return (WeakScheduler(h.scheduler), watched, h.queue)
    }
}
