import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `finish` check: exactly one finish, never before the deadline, nothing after it; the key is free again.
enum FinishCheck {
    static let check = ConformanceCheck(
        "finish", .contract,
        "exactly one finish, never before the deadline, nothing after it; the key is free again",
        body: run)

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(100))
        let whole = h.recorder(), partial = h.recorder()
        let before = SystemClocks.monotonic()
        try h.scheduler.start(key: "whole", duration: .milliseconds(300), observer: whole.observer)
        // Not a whole number of ticks: the last interval is shorter, and still not early.
        try h.scheduler.start(key: "partial", duration: .milliseconds(250), observer: partial.observer)
        let finished = whole.waitForFinish() && partial.waitForFinish()
        guard c.expect(finished, "no finish within 10 s of 300 ms and 250 ms countdowns") else { return }
        settle(.milliseconds(300))  // three ticks of silence: a second finish or a late tick would show
        h.queue.drain()
        var errors: [String] = []
        for (key, log, ms) in [("whole", whole, 300), ("partial", partial, 250)] {
            EventRules.wellFormed(log.all, key, in: c)
            EventRules.neverEarly(log.ticks, duration: .milliseconds(ms), start: before, key, in: c)
            c.expect(log.finishes.count == 1, "\(key): \(log.finishes.count) finishes")
            if let finish = log.finishes.first {
                let deadline = before + UInt64(ms) * 1_000_000
                c.expect(finish.at + granularity >= deadline,
                         "\(key): finished \(DurationText.nanoseconds(Double(deadline - finish.at))) before the deadline")
                errors.append("\(key) \(DurationText.nanoseconds(Double(Int64(finish.at) - Int64(deadline))))")
            }
            c.expect(h.scheduler.remaining(key: key) == nil, "\(key): remaining(key:) is not nil after the finish")
        }
        c.figure("finish after the deadline by at most: " + errors.joined(separator: ", "))
        c.expect(partial.ticks.count <= 3, "partial: \(partial.ticks.count) ticks for a 250 ms countdown of 100 ms ticks")
        c.expect(h.scheduler.activeCount == 0, "activeCount is \(h.scheduler.activeCount) after both finished")
        let again = h.recorder()
        let outcome = try h.scheduler.start(key: "whole", duration: .seconds(5), observer: again.observer)
        c.expect(outcome == .started, "start on a finished key returned \(outcome)")
    }
}
