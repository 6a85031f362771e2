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
                c.expect(finish.at + c.granularity >= deadline,
                         "\(key): finished \(DurationText.nanoseconds(Double(deadline - finish.at))) before the deadline")
                errors.append("\(key) \(DurationText.nanoseconds(Double(Int64(finish.at) - Int64(deadline))))")
            }
        }
        c.expect(s.remaining(key: "partial") == nil, "partial: remaining(key:) is not nil after the finish")
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
        let sweep = neverEarly(h, c)
        c.figure("finish after the deadline by at most: " + errors.joined(separator: ", ") + (sweep.map { "; \($0)" } ?? ""))
    }

    /// Six countdowns, each judged from the instant just before its own start: a finish early by
    /// less than a millisecond hides behind one late wake-up, not behind six. Late is allowed (by
    /// design up to the declared tolerance, and by load); early by more than the clocks'
    /// allowance (``ClockAllowance``, zero in virtual time) never.
    private static func neverEarly(_ h: Harness, _ c: CheckContext) -> String? {
        var runs: [(key: String, log: Recorder, before: UInt64, ms: UInt64)] = []
        for (index, ms) in [110, 130, 150, 170, 190, 210].enumerated() {
            let key = "never-early:\(index)", log = h.recorder()
            let before = h.now()
            do {
                _ = try h.scheduler.start(key: key, duration: .milliseconds(ms), observer: log.observer)
            } catch {
                c.fail("\(key): start threw \(error)")
                continue
            }
            runs.append((key, log, before, UInt64(ms)))
        }
        let all = h.waitUntil { runs.allSatisfy { !$0.log.finishes.isEmpty } }
        guard c.expect(all, "six countdowns of 110-210 ms not all finished within 10 s") else { return nil }
        var earliest = Int64.max
        for run in runs {
            guard let finish = run.log.finishes.first else { continue }
            let deadline = run.before + run.ms * 1_000_000
            earliest = min(earliest, Int64(bitPattern: finish.at &- deadline))
            c.expect(finish.at + c.granularity >= deadline,
                     "\(run.key): finished \(DurationText.nanoseconds(Double(deadline &- finish.at))) before the deadline "
                        + "(the backend declares a tolerance of \(h.scheduler.profile.tolerance): late by design up to it, never early)")
        }
        guard earliest != .max else { return nil }
        return "six more: the earliest \(DurationText.nanoseconds(Double(earliest.magnitude))) \(earliest >= 0 ? "after" : "before") its deadline"
    }
}
