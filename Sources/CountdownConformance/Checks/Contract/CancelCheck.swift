import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `cancel` check: cancel returns whether a countdown ran; nothing begins after it returns.
enum CancelCheck {
    static let check = ConformanceCheck(
        "cancel", .contract,
        "cancel returns whether a countdown ran; nothing begins after it returns",
        body: run)

    static func run(_ c: CheckContext) throws {
        let tick = Duration.milliseconds(10)
        let h = try c.makeScheduler(tick: tick)
        let s = h.scheduler
        c.expect(s.cancel(key: "nobody") == false, "cancel of an unknown key returned true")

        // From another thread: once cancel returned and the queue drained, silence.
        let fromThread = h.recorder()
        try s.start(key: "a", duration: h.longCountdown, observer: fromThread.observer)
        _ = fromThread.wait { $0.count >= 3 }
        c.expect(s.cancel(key: "a"), "cancel of a running countdown returned false")
        h.drain()
        let afterCancel = fromThread.count
        c.expect(s.cancel(key: "a") == false, "a second cancel returned true")
        c.expect(s.remaining(key: "a") == nil, "remaining(key:) is not nil after cancel")

        // On the delivery queue: exact, no draining needed.
        let onQueue = h.recorder()
        try s.start(key: "b", duration: h.longCountdown, observer: onQueue.observer)
        _ = onQueue.wait { $0.count >= 3 }
        let (cancelled, atCancel) = h.queue.queue.sync { (s.cancel(key: "b"), onQueue.count) }
        c.expect(cancelled, "cancel on the delivery queue returned false")

        // Behind a busy queue: ticks already queued are silenced by the cancel.
        let queued = h.recorder()
        try s.start(key: "q", duration: h.longCountdown, observer: queued.observer)
        _ = queued.wait { $0.count >= 2 }
        let beforeHold = h.holding {
            let count = queued.count
            h.settle(tick * 6)
            c.expect(s.cancel(key: "q"), "cancel behind a busy queue returned false")
            return count
        }

        // A paused countdown is cancelled too.
        let paused = h.recorder()
        try s.start(key: "c", duration: h.longCountdown, observer: paused.observer)
        c.expect(s.pause(key: "c"), "pause returned false")
        c.expect(s.cancel(key: "c"), "cancel of a paused countdown returned false")

        h.settle(tick * 15)
        h.drain()
        c.expect(fromThread.count == afterCancel, "\(fromThread.count - afterCancel) events after cancel returned (called from another thread)")
        c.expect(onQueue.count == atCancel, "\(onQueue.count - atCancel) events after cancel returned (called on the delivery queue)")
        c.expect(queued.count == beforeHold, "\(queued.count - beforeHold) queued ticks delivered after cancel returned")
        c.expect(fromThread.finishes.isEmpty && onQueue.finishes.isEmpty && paused.finishes.isEmpty,
                 "a cancelled countdown finished")
        c.expectEqual(s.activeCount, 0, "activeCount", "after cancelling everything")
    }
}
