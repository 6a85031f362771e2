import Countdown

/// The `fleet.attach` check: an observer attached in one scheduler replaces the one in another,
/// fleet-wide; the finish reaches the last attached observer only, where it is.
enum FleetAttachCheck {
    static let check = ConformanceCheck(
        "fleet.attach", .contract,
        "a fleet: a start elsewhere attaches; the last observer attached anywhere hears the finish, once",
        body: run)

    static func run(_ c: CheckContext) throws {
        guard let (a, b) = try c.makeFleet(tick: .milliseconds(20)) else { return }
        let first = a.recorder(), second = b.recorder()
        let duration = Duration.milliseconds(500)
        c.expect(try a.scheduler.start(key: "fleet:attach", duration: duration, observer: first.observer) == .started,
                 "the first start did not answer .started")
        _ = first.wait { $0.count >= 3 }
        let answer = try b.scheduler.start(key: "fleet:attach", duration: .seconds(60), observer: second.observer)
        guard case .attached(let remaining) = answer else {
            c.fail("a start of the same key in the other scheduler answered \(answer), not .attached")
            return
        }
        c.expect(remaining > .zero && remaining < duration, "attached with \(remaining) left of a \(duration) countdown")
        c.expect(second.waitForFinish(), "the observer attached in the other scheduler never heard the finish")
        a.settle(.milliseconds(100))
        a.drain()
        b.drain()
        c.expect(first.finishes.isEmpty, "the replaced observer, in the first scheduler, heard the finish")
        c.expectEqual(second.finishes.count, 1, "finishes heard by the attached observer")
        c.expect(second.all.first?.event == CountdownEvent(key: "fleet:attach", kind: .tick, remaining: remaining),
                 "the attached observer's first event was \(String(describing: second.all.first?.event)), not a tick of \(remaining)")
        EventRules.wellFormed(second.all, "the attached observer", in: c)
        EventRules.wellFormed(first.all, "the replaced observer", in: c)
        c.figure("attached in the other scheduler with \(remaining) left; the finish heard there")
    }
}
