import Countdown
import CountdownSupport

/// The `fleet.cancel` check: a countdown started in one scheduler of a fleet is cancelled from
/// another; it ends everywhere, its observer hears nothing that begins more than
/// ``FleetTrial/silence`` after the cancel returned (it hears of it one hop later, with nothing
/// asked of its own scheduler), and never a finish; asked at once, its scheduler knows.
enum FleetCancelCheck {
    static let check = ConformanceCheck(
        "fleet.cancel", .contract,
        "a fleet: a cancel from another scheduler ends the countdown everywhere; silence within 100 ms, no finish",
        body: run)

    static func run(_ c: CheckContext) throws {
        guard let (a, b) = try c.makeFleet(tick: .milliseconds(20)) else { return }
        silence(a, b, c)
        answersAtOnce(a, b, c)
    }

    /// Nothing is asked of the first scheduler between the other's cancel and the judgement: a
    /// member that learns of another's cancel only when it is asked itself (a cancel of its own
    /// that finds nothing, a remaining) would be silenced by the check's own call, and pass.
    private static func silence(_ a: Harness, _ b: Harness, _ c: CheckContext) {
        guard let observer = started("fleet:cancel", in: a, c) else { return }
        c.expect(b.scheduler.remaining(key: "fleet:cancel") != nil, "the other scheduler does not see the countdown")
        c.expect(b.scheduler.activeKeys.contains("fleet:cancel"), "the other scheduler does not list the key")
        c.expect(b.scheduler.cancel(key: "fleet:cancel"), "cancel from the other scheduler returned false")
        let returned = b.now()
        // Past the countdown's deadline, so that a backend that never heard of the cancel has
        // ticked and finished by then.
        a.settle(.milliseconds(500))
        a.drain()
        let bound = nanoseconds(FleetTrial.silence)
        let late = observer.all.filter { $0.at > returned + bound }
        if let last = late.last {
            c.fail("\(late.count) event(s) began more than \(FleetTrial.silence) after the cancel from the other scheduler returned, the last \(DurationText.nanoseconds(Double(last.at - returned))) after it (nothing was asked of the first scheduler meanwhile)")
        }
        c.expect(observer.finishes.isEmpty, "the cancelled countdown finished")
        c.expectEqual(a.scheduler.activeCount, 0, "activeCount", "after the cancel")
        let after = observer.all.filter { $0.at > returned }.map { $0.at - returned }.max()
        c.figure(after.map { "the observer's last event began \(DurationText.nanoseconds(Double($0))) after the cancel from the other scheduler returned" }
            ?? "no event after the cancel from the other scheduler returned")
    }

    /// Right after the other's cancel returned, the first scheduler answers as the fleet is:
    /// nothing runs, and a cancel of its own finds nothing.
    private static func answersAtOnce(_ a: Harness, _ b: Harness, _ c: CheckContext) {
        let key = "fleet:cancel:asked"
        guard let observer = started(key, in: a, c) else { return }
        c.expect(b.scheduler.cancel(key: key), "\(key): cancel from the other scheduler returned false")
        c.expect(a.scheduler.remaining(key: key) == nil, "the countdown runs on in the first scheduler after the cancel")
        c.expect(!a.scheduler.cancel(key: key), "a second cancel, from the first scheduler, returned true")
        a.settle(.milliseconds(500))
        a.drain()
        c.expect(observer.finishes.isEmpty, "\(key): the cancelled countdown finished")
    }

    /// A 400 ms countdown started in `a`, once its observer heard two events; nil, failed, when
    /// the start did not answer .started.
    private static func started(_ key: String, in a: Harness, _ c: CheckContext) -> Recorder? {
        let observer = a.recorder()
        guard (try? a.scheduler.start(key: key, duration: .milliseconds(400), observer: observer.observer)) == .started else {
            c.fail("\(key): the first start did not answer .started")
            return nil
        }
        _ = observer.wait { $0.count >= 2 }
        return observer
    }
}
