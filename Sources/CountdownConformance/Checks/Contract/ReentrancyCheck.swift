import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `reentrancy` check: observers may call every method of the scheduler without deadlock.
enum ReentrancyCheck {
    static let check = ConformanceCheck(
        "reentrancy", .contract,
        "observers may call every method of the scheduler without deadlock",
        body: run)

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(15))
        let s = h.scheduler
        let results = Locked<[String]>([])
        let inner = h.recorder()
        let duration = h.longCountdown
        try s.start(key: "outer", duration: duration, observer: h.queue.judging("start") { event in
            guard event.kind == .tick, event.remaining < duration else { return }
            // The second tick exercises every method from inside the callback.
            _ = s.remaining(key: "outer")
            _ = s.activeKeys
            _ = s.activeCount
            let paused = s.pause(key: "outer"), resumed = s.resume(key: "outer")
            _ = try? s.start(key: "outer", duration: duration, observer: h.ignoring("start"))  // an attach
            _ = s.attach(key: "outer", observer: h.ignoring("attach"))
            _ = try? s.start(key: "inner", duration: .milliseconds(60), observer: inner.observer)
            let cancelled = s.cancel(key: "outer")
            results.withLock { $0.append("pause=\(paused) resume=\(resumed) cancel=\(cancelled)") }
        })
        guard c.expect(h.waitUntil { !results.withLock { $0 }.isEmpty },
                       "the callback that called back into the scheduler never returned (deadlock?)")
        else { return }
        c.expect(results.withLock { $0 } == ["pause=true resume=true cancel=true"],
                 "from a callback: \(results.withLock { $0 })")
        c.expect(inner.waitForFinish(), "a countdown started from a callback never finished")
        var left = 0
        c.expect(h.waitUntil { left = s.activeCount; return left == 0 }, "\(left) countdowns left")
    }
}
