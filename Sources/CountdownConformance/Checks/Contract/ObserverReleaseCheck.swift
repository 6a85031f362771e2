import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `observer-release` check: no reference kept to observers that finished, were cancelled or replaced.
enum ObserverReleaseCheck {
    static let check = ConformanceCheck(
        "observer-release", .contract,
        "no reference kept to observers that finished, were cancelled or replaced",
        body: run)

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(10))
        let s = h.scheduler
        let finished = Locked(false)
        let finishing = try startWatched(h, key: "finish", duration: .milliseconds(40)) { finished.withLock { $0 = true } }
        let cancelled = try startWatched(h, key: "cancel", duration: h.longCountdown)
        let replaced = try startWatched(h, key: "replace", duration: h.longCountdown)
        // The 40 ms countdown may have finished already on a slow machine (CI's sanitized run
        // once took that long over three starts): released then, it was not in use. Read after
        // its liveness, the flag set in its finish's callback says so (the release follows it).
        let finishingInUse = finishing.isAlive || finished.withLock { $0 }
        c.expect(finishingInUse && cancelled.isAlive && replaced.isAlive,
                 "observers were released while in use (finishing \(finishingInUse), cancelled \(cancelled.isAlive), replaced \(replaced.isAlive))")
        c.expect(h.waitUntil { finished.withLock { $0 } }, "the 40 ms countdown never finished")
        c.expect(s.cancel(key: "cancel"), "cancel returned false")
        let replacement = try startWatched(h, key: "replace", duration: h.longCountdown)
        h.drain()
        c.expect(h.waitUntil(timeout: .seconds(3)) { !finishing.isAlive }, "the observer of a finished countdown is still referenced")
        c.expect(h.waitUntil(timeout: .seconds(3)) { !cancelled.isAlive }, "the observer of a cancelled countdown is still referenced")
        c.expect(h.waitUntil(timeout: .seconds(3)) { !replaced.isAlive }, "a replaced observer is still referenced")
        c.expect(replacement.isAlive, "the current observer was released")
    }

    /// Starts a countdown whose observer is the only holder of a token the check can watch.
    private static func startWatched(
        _ h: Harness, key: String, duration: Duration, onFinish: (@Sendable () -> Void)? = nil
    ) throws -> Watched {
        let token = Token()
        try h.scheduler.start(key: key, duration: duration, observer: h.queue.judging("start") { event in
            _ = token
            if event.kind == .finished { onFinish?() }
        })
        return Watched(token)
    }
}
