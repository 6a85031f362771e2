import Countdown
import CountdownSupport

/// The `fleet.attach` check: an observer attached in one scheduler replaces the one in another,
/// fleet-wide: the replaced observer hears nothing that begins more than ``FleetTrial/silence``
/// after the attach returned, and is let go; the finish reaches the last attached observer
/// only, where it is.
enum FleetAttachCheck {
    static let check = ConformanceCheck(
        "fleet.attach", .contract,
        "a fleet: a start elsewhere attaches; the replaced observer is silent within 100 ms and let go; the last one hears the finish, once",
        body: run)

    static func run(_ c: CheckContext) throws {
        guard let (a, b) = try c.makeFleet(tick: .milliseconds(20)) else { return }
        // Judged only when the other scheduler's start returned before the countdown's earliest
        // deadline (the first start's beginning plus its duration), by the timestamps: one that
        // came later may find the key free and start, as it should (``Lengthening``).
        _ = try Lengthening(initial: .milliseconds(500), call: "start").run(c, "attach") { duration, attempt -> Void? in
            let key = "fleet:attach:\(attempt)"
            let first = a.recorder(), second = b.recorder()
            let began = a.now()
            let (started, watched) = try startWatched(a.scheduler, key: key, duration: duration, forwardingTo: first.observer)
            c.expect(started == .started, "the first start did not answer .started")
            _ = first.wait { $0.count >= 3 }
            let answer = try b.scheduler.start(key: key, duration: .seconds(60), observer: second.observer)
            let returned = b.now()
            if case .attached = answer {} else if returned >= began + nanoseconds(duration) {
                _ = b.scheduler.cancel(key: key)
                return nil
            }
            judge(a, b, c, key: key, duration: duration, answer: answer, returned: returned, first: first, second: second, watched: watched)
            return ()
        }
    }

    private static func judge(
        _ a: Harness, _ b: Harness, _ c: CheckContext, key: String, duration: Duration, answer: CountdownStart, returned: UInt64,
        first: Recorder, second: Recorder, watched: Watched
    ) {
        guard case .attached(let remaining) = answer else {
            c.fail("a start of the same key in the other scheduler answered \(answer), not .attached")
            return
        }
        c.expect(remaining > .zero && remaining < duration, "attached with \(remaining) left of a \(duration) countdown")
        c.expect(second.waitForFinish(), "the observer attached in the other scheduler never heard the finish")
        a.settle(.milliseconds(100))
        a.drain()
        b.drain()
        let bound = nanoseconds(FleetTrial.silence)
        let late = first.all.filter { $0.at > returned + bound }
        if let last = late.last {
            c.fail("the replaced observer heard \(late.count) event(s) that began more than \(FleetTrial.silence) after the attach in the other scheduler returned, the last \(DurationText.nanoseconds(Double(last.at - returned))) after it")
        }
        c.expect(realTimeWait(timeout: .seconds(2)) { a.drain(); return !watched.isAlive },
                 "the replaced observer is still held 2 s after the attach in the other scheduler")
        c.expect(first.finishes.isEmpty, "the replaced observer, in the first scheduler, heard the finish")
        c.expectEqual(second.finishes.count, 1, "finishes heard by the attached observer")
        c.expect(second.all.first?.event == CountdownEvent(key: key, kind: .tick, remaining: remaining),
                 "the attached observer's first event was \(String(describing: second.all.first?.event)), not a tick of \(remaining)")
        EventRules.wellFormed(second.all, "the attached observer", in: c)
        EventRules.wellFormed(first.all, "the replaced observer", in: c)
        c.figure("attached in the other scheduler with \(remaining) left of \(duration); the finish heard there")
    }

    /// Starts a countdown whose observer forwards to `observer` and is the only holder of a
    /// token the check watches.
    private static func startWatched(
        _ s: any CountdownScheduler, key: String, duration: Duration, forwardingTo observer: @escaping CountdownObserver
    ) throws -> (CountdownStart, Watched) {
        let token = Token()
        let answer = try s.start(key: key, duration: duration) { event in withExtendedLifetime(token) { observer(event) } }
        return (answer, Watched(token))
    }
}
