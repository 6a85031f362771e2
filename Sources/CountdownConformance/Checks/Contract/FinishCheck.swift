import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `finish` check: exactly one finish, never before the deadline, nothing after it; the key is free again.
enum FinishCheck {
    static let check = ConformanceCheck(
        "finish", .contract,
        "exactly one finish, never before the deadline, nothing after it; when it is delivered the key is free at once",
        body: run)

    /// What the scheduler said from inside the finish's own callback.
    struct AtFinish: Sendable {
        let remaining: Duration?
        let listed: Bool
        let activeCount: Int
        let restart: Result<CountdownStart, CountdownError>
    }

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(100))
        let s = h.scheduler
        let whole = h.recorder(), partial = h.recorder(), again = h.recorder()
        let atFinish = Locked<AtFinish?>(nil)
        let recordWhole = whole.observer
        let before = h.now()
        // The moment the finish is delivered, the key is free: nothing left to query, and a
        // start begins a new countdown (an observer may call the scheduler).
        try s.start(key: "whole", duration: .milliseconds(300)) { event in
            recordWhole(event)
            guard event.kind == .finished else { return }
            let remaining = s.remaining(key: "whole")
            let listed = s.activeKeys.contains("whole")
            let count = s.activeCount
            let restart = Result { () throws(CountdownError) -> CountdownStart in
                try s.start(key: "whole", duration: .seconds(5), observer: again.observer)
            }
            atFinish.withLock { $0 = AtFinish(remaining: remaining, listed: listed, activeCount: count, restart: restart) }
        }
        // Not a whole number of ticks: the last interval is shorter, and still not early.
        try h.scheduler.start(key: "partial", duration: .milliseconds(250), observer: partial.observer)
        let finished = whole.waitForFinish() && partial.waitForFinish()
        guard c.expect(finished, "no finish within 10 s of 300 ms and 250 ms countdowns") else { return }
        h.settle(.milliseconds(300))  // three ticks of silence: a second finish or a late tick would show
        h.drain()
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
        }
        c.expect(s.remaining(key: "partial") == nil, "partial: remaining(key:) is not nil after the finish")
        c.figure("finish after the deadline by at most: " + errors.joined(separator: ", "))
        c.expect(partial.ticks.count <= 3, "partial: \(partial.ticks.count) ticks for a 250 ms countdown of 100 ms ticks")
        if let seen = atFinish.withLock({ $0 }) {
            c.expect(seen.remaining == nil, "in the finish's callback, remaining(key:) was \(String(describing: seen.remaining)), not nil")
            c.expect(!seen.listed, "in the finish's callback, activeKeys still listed the finished key")
            c.expect(seen.activeCount <= 1, "in the finish's callback, activeCount was \(seen.activeCount) (at most the other countdown may run)")
            switch seen.restart {
            case .success(let outcome):
                c.expect(outcome == .started, "start on the key in its finish's callback returned \(outcome), not started")
            case .failure(let error):
                c.fail("start on the key in its finish's callback threw \(error)")
            }
            c.expect(again.wait(timeout: .seconds(3)) { !$0.isEmpty }, "the countdown restarted in the finish's callback was never heard from")
            c.expectEqual(s.activeKeys, ["whole"], "activeKeys", "with only the restarted countdown running")
        } else {
            c.fail("the finish's callback never ran its queries")
        }
    }
}
