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
        let ownThreads: Set<Int>
        (harness, ownThreads) = try c.makeSchedulerWatchingThreads(tick: .milliseconds(10))
        guard harness != nil else { return }
        // Never shut down: the check's own clean-up must not do it either.
        c.release(harness!.scheduler)
        let (scheduler, watched, queue) = try exercise(harness!, in: c)
        harness = nil
        c.expect(realTimeWait(timeout: .seconds(3)) { !scheduler.isAlive },
                 "the scheduler is still referenced 3 s after its last reference was released")
        queue.drain()
        c.expect(realTimeWait(timeout: .seconds(3)) { watched.allSatisfy { !$0.isAlive } },
                 "\(watched.filter(\.isAlive).count) of 3 observers still referenced after the scheduler was released")
        c.expectThreadsEnded(ownThreads, after: "it was released (never shut down)")
    }

    /// Starts countdowns running and paused on `h`, with observers the check can watch; returns
    /// weak references, so that nothing here keeps the scheduler.
    private static func exercise(_ h: Harness, in c: CheckContext) throws -> (WeakScheduler, [Watched], DeliveryQueue) {
        var watched: [Watched] = []
        for (key, pause) in [("running", false), ("paused", true), ("ticking", false)] {
            let token = Token()
            try h.scheduler.start(key: key, duration: .seconds(30), observer: h.queue.judging("start") { _ in _ = token })
            if pause { c.expect(h.scheduler.pause(key: key), "pause returned false") }
            watched.append(Watched(token))
        }
        h.settle(.milliseconds(50))
        return (WeakScheduler(h.scheduler), watched, h.queue)
    }
}
