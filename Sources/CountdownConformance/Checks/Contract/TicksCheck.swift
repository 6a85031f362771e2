import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `ticks` check: a tick every T, never early, never more than D − k·T, never increasing, never zero.
enum TicksCheck {
    static let check = ConformanceCheck(
        "ticks", .contract,
        "a tick every T, never early, never more than D − k·T, never increasing, never zero",
        body: run)

    static func run(_ c: CheckContext) throws {
        // A machine that stalls for a whole 300 ms countdown leaves one tick; the round is run
        // again (three times at most) rather than judged on that.
        var counts: [Int] = []
        for _ in 0..<3 {
            let ticks = try round(c)
            counts.append(ticks)
            if ticks >= 2 { break }
        }
        c.expect(counts.contains { $0 >= 2 }, "\(counts.map(String.init).joined(separator: ", ")) tick(s) in ten intervals, in \(counts.count) rounds: no tick after the first")
    }

    /// One 300 ms countdown of 30 ms ticks, judged; returns how many ticks it heard.
    private static func round(_ c: CheckContext) throws -> Int {
        let tick = Duration.milliseconds(30), duration = Duration.milliseconds(300)
        let h = try c.makeScheduler(tick: tick)
        let log = h.recorder()
        let before = h.now()
        try h.scheduler.start(key: "k", duration: duration, observer: log.observer)
        guard c.expect(log.waitForFinish(), "no finish within 10 s of a 300 ms countdown") else { return 0 }
        h.drain()
        let ticks = log.ticks
        EventRules.wellFormed(log.all, "k", in: c)
        EventRules.neverEarly(ticks, duration: duration, start: before, "k", in: c)
        for (k, record) in ticks.enumerated() {
            // Tick k is at grid point k or later (a clock-reading backend skips points missed in
            // a stall), so it carries at most D − k·T: more means its deadline and its ticks disagree.
            c.expect(record.event.remaining <= duration - tick * k + .milliseconds(1),
                     "tick \(k) carries \(record.event.remaining), more than D − k·T = \(duration - tick * k)")
        }
        let intervals = zip(ticks.dropFirst(), ticks.dropFirst(2)).map { Int64($1.at) - Int64($0.at) }
        if let worst = intervals.map({ abs($0 - Int64(nanoseconds(tick))) }).max() {
            c.figure("\(ticks.count) ticks; worst interval error \(DurationText.nanoseconds(Double(worst)))")
        }
        // Judged by what the backend did, never by what it declares (a declaration must not
        // switch an assertion off): at most one tick per interval.
        c.expect(ticks.count <= 10, "\(ticks.count) ticks for ten intervals: \(ticks.map(\.event.remaining))")
        return ticks.count
    }
}
