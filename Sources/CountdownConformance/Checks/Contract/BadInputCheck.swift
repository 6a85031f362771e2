import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `bad-input` check: empty key, non-positive or too long durations, a bad tick interval: a typed error, nothing changed.
enum BadInputCheck {
    static let check = ConformanceCheck(
        "bad-input", .contract,
        "empty key, non-positive or too long durations, a bad tick interval: a typed error, nothing changed",
        body: run)

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(20))
        let s = h.scheduler
        let maximum = s.profile.maximumDuration
        let running = h.recorder(), refused = h.recorder()
        try s.start(key: "running", duration: h.longCountdown, observer: running.observer)
        func refuses(_ key: String, _ duration: Duration, _ expected: CountdownError) {
            do {
                let outcome = try s.start(key: key, duration: duration, observer: refused.observer)
                c.fail("start(\"\(key)\", \(duration)) returned \(outcome) instead of throwing \(expected)")
            } catch {
                c.expect(error == expected, "start(\"\(key)\", \(duration)) threw \(error), not \(expected)")
            }
        }
        refuses("", .seconds(1), .emptyKey)
        refuses("zero", .zero, .nonPositiveDuration(.zero))
        refuses("negative", .seconds(-1), .nonPositiveDuration(.seconds(-1)))
        let tooLong = maximum + .seconds(1)
        refuses("long", tooLong, .durationAboveMaximum(tooLong, maximum: maximum))
        // Refused for the running key too: too long is not an attach.
        refuses("running", tooLong, .durationAboveMaximum(tooLong, maximum: maximum))
        _ = running.wait { $0.count >= 3 }
        h.settle(.milliseconds(60))
        c.expect(running.count >= 3, "the running countdown stopped ticking after refused starts")
        c.expect(refused.count == 0, "the observer of a refused start was called \(refused.count) times")
        c.expectEqual(s.activeKeys, ["running"], "activeKeys", "after refused starts")

        // A tick interval that is not positive is refused when the scheduler is made.
        for bad in [Duration.zero, .milliseconds(-5)] {
            do {
                _ = try c.makeScheduler(tick: bad)
                c.fail("a scheduler was made with a tick interval of \(bad)")
            } catch let error as CountdownError {
                c.expect(error == .nonPositiveTickInterval(bad), "tick interval \(bad): threw \(error)")
            } catch {
                c.fail("tick interval \(bad): threw \(error), not a CountdownError")
            }
        }
    }
}
