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
        let tick = Duration.milliseconds(30), duration = Duration.milliseconds(300)
        let h = try c.makeScheduler(tick: tick)
        let log = h.recorder()
        let before = h.now()
        try h.scheduler.start(key: "k", duration: duration, observer: log.observer)
        guard c.expect(log.waitForFinish(), "no finish within 10 s of a 300 ms countdown") else { return }
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
        if h.scheduler.profile.suspension == .finishesLateByFreeze {
            // A counting backend counts every fire: ten ticks, a whole tick apart, whatever the load.
            let expected = (0..<10).map { duration - tick * $0 }
            c.expect(ticks.map(\.event.remaining) == expected,
                     "a tick-counting backend ticked \(ticks.map(\.event.remaining)), not \(expected)")
        } else {
            c.expect((2...10).contains(ticks.count), "\(ticks.count) ticks for ten intervals: \(ticks.map(\.event.remaining))")
        }
    }
}
