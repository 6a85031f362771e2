import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `start` check: start: .started, a first tick with the full duration at once, on the delivery queue.
enum StartCheck {
    static let check = ConformanceCheck(
        "start", .contract,
        "start: .started, a first tick with the full duration at once, on the delivery queue",
        body: run)

    static func run(_ c: CheckContext) throws {
        // A 10 s tick: a first event within 3 s can only be the immediate one.
        let h = try c.makeScheduler(tick: .seconds(10))
        let log = h.recorder()
        let before = h.now()
        let outcome = try h.scheduler.start(key: "sms", duration: .seconds(60), observer: log.observer)
        c.expect(outcome == .started, "start returned \(outcome), not started")
        guard c.expect(log.wait(timeout: .seconds(3)) { !$0.isEmpty }, "no tick within 3 s of start (tick interval 10 s)"),
              let first = log.all.first
        else { return }
        c.figure("first tick \(DurationText.nanoseconds(Double(first.at - before))) after start")
        c.expect(first.event == CountdownEvent(key: "sms", kind: .tick, remaining: .seconds(60)),
                 "the first event is \(EventRules.describe(first.event)), not tick(60 s)")
        c.expect(first.onDeliveryQueue, "the first tick did not run on the delivery queue")
        c.expectEqual(h.scheduler.activeKeys, ["sms"], "activeKeys")
        c.expectEqual(h.scheduler.activeCount, 1, "activeCount")
        if let remaining = h.scheduler.remaining(key: "sms") {
            c.expect(remaining <= .seconds(60) && remaining > .seconds(50), "remaining(key:) is \(remaining)")
        } else {
            c.fail("remaining(key:) is nil for a running countdown")
        }
        c.expect(h.scheduler.remaining(key: "other") == nil, "remaining(key:) of an unknown key is not nil")
        firstTickWhateverComesFirst(h, c)
    }

    /// Whatever lands before the delivery queue runs, the first tick carries the full duration:
    /// a pause and a resume made while the queue is held (a fleet member once told a remaining
    /// read after the resume, tick(0.979 s), and never the whole second).
    private static func firstTickWhateverComesFirst(_ h: Harness, _ c: CheckContext) {
        let log = h.recorder()
        let answers = h.holding { () -> (CountdownStart?, Bool, Bool) in
            let outcome = try? h.scheduler.start(key: "held", duration: .seconds(60), observer: log.observer)
            return (outcome, h.scheduler.pause(key: "held"), h.scheduler.resume(key: "held"))
        }
        guard c.expect(answers.0 == .started && answers.1 && answers.2,
                       "with the delivery queue held: start, pause and resume of a fresh key answered \(answers), not (started, true, true)"),
              c.expect(log.wait(timeout: .seconds(3)) { !$0.isEmpty }, "held: no tick within 3 s of a start, pause and resume made while the delivery queue was held"),
              let first = log.all.first
        else { return }
        c.expect(first.event == CountdownEvent(key: "held", kind: .tick, remaining: .seconds(60)),
                 "held: a pause and a resume made before the delivery queue ran, and the first event is \(EventRules.describe(first.event)), not tick(60 s)")
    }
}
