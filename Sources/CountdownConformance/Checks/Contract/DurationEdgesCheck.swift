import Countdown
import CountdownSupport
import Foundation

/// The `edges` check: durations and tick intervals at the edges of what is accepted.
enum DurationEdgesCheck {
    static let check = ConformanceCheck(
        "edges", .contract,
        "durations at the edges (1 ns, under a tick, exactly the maximum, 1 ns above, not a multiple of the tick) and the shortest tick interval",
        body: run)

    static func run(_ c: CheckContext) throws {
        let tick = Duration.milliseconds(20)
        let h = try c.makeScheduler(tick: tick)
        let s = h.scheduler
        let maximum = s.profile.maximumDuration

        // Every accepted start is heard from and finishes, never early.
        for (label, duration) in [("1 ns", Duration.nanoseconds(1)), ("half a tick", tick / 2), ("2.5 ticks", tick * 5 / 2)] {
            let log = h.recorder()
            let before = h.now()
            let outcome = try s.start(key: label, duration: duration, observer: log.observer)
            c.expect(outcome == .started, "\(label): start returned \(outcome)")
            guard c.expect(log.waitForFinish(), "\(label): started, and no finish within 10 s") else { continue }
            h.drain()
            EventRules.wellFormed(log.all, label, in: c)
            c.expect(log.all.first?.event == CountdownEvent(key: label, kind: .tick, remaining: duration),
                     "\(label): the first event is \(log.all.first.map { EventRules.describe($0.event) } ?? "none"), not tick(\(duration))")
            if let finish = log.finishes.first {
                c.expect(finish.at + c.granularity >= before + nanoseconds(duration),
                         "\(label): finished before its deadline")
            }
        }

        // Exactly the maximum is accepted; a nanosecond more is refused and changes nothing.
        let atMaximum = h.recorder(), above = h.recorder()
        do {
            let outcome = try s.start(key: "maximum", duration: maximum, observer: atMaximum.observer)
            c.expect(outcome == .started, "start with exactly the maximum duration (\(maximum)) returned \(outcome)")
            c.expect(atMaximum.wait(timeout: .seconds(3)) { !$0.isEmpty },
                     "started with exactly the maximum duration, then nothing was heard within 3 s")
            h.drain()
            c.expect(atMaximum.all.first?.event.remaining == maximum,
                     "the first tick of a countdown of the maximum duration carries \(atMaximum.all.first.map { "\($0.event.remaining)" } ?? "nothing"), not \(maximum)")
        } catch {
            c.fail("start with exactly the maximum duration (\(maximum)) threw \(error)")
        }
        let justAbove = maximum + .nanoseconds(1)
        let keysBefore = Set(s.activeKeys)
        do {
            let outcome = try s.start(key: "above", duration: justAbove, observer: above.observer)
            c.fail("start with 1 ns above the maximum returned \(outcome)")
        } catch {
            c.expect(error == .durationAboveMaximum(justAbove, maximum: maximum),
                     "start with 1 ns above the maximum threw \(error), not durationAboveMaximum")
        }
        c.expectEqual(Set(s.activeKeys), keysBefore, "the set of active keys", "after a refused start")
        c.expect(s.cancel(key: "maximum"), "cancel of the countdown of the maximum duration returned false")
        h.settle(tick * 2)
        h.drain()
        c.expect(above.count == 0, "the observer of the refused start was called")

        // The package's shortest tick interval works (or is refused for a longer minimum of the
        // backend's own); half of it is refused with a typed error, or works.
        let shortest = CountdownLimits.minimumTickInterval
        for interval in [shortest, shortest / 2] {
            do {
                let fast = try c.makeScheduler(tick: interval)
                let log = fast.recorder()
                try fast.scheduler.start(key: "fast", duration: .milliseconds(20), observer: log.observer)
                c.expect(log.waitForFinish(),
                         "a scheduler made with a \(interval) tick interval never finished a 20 ms countdown")
                fast.drain()
                EventRules.wellFormed(log.all, "tick \(interval)", in: c)
            } catch let error as CountdownError {
                guard case .tickIntervalTooShort(_, let minimum) = error else {
                    c.fail("a \(interval) tick interval was refused with \(error), not tickIntervalTooShort")
                    continue
                }
                c.expect(interval < shortest || minimum > shortest,
                         "the package's shortest tick interval (\(shortest)) was refused with a minimum of \(minimum)")
            }
        }
    }
}
