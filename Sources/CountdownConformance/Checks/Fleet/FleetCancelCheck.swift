import Countdown
import CountdownSupport

/// The `fleet.cancel` check: a countdown started in one scheduler of a fleet is cancelled from
/// another; it ends everywhere, its observer hears nothing that begins more than
/// ``FleetTrial/silence`` after the cancel returned (it hears of it one hop later), and never
/// a finish.
enum FleetCancelCheck {
    static let check = ConformanceCheck(
        "fleet.cancel", .contract,
        "a fleet: a cancel from another scheduler ends the countdown everywhere; silence within 100 ms, no finish",
        body: run)

    static func run(_ c: CheckContext) throws {
        guard let (a, b) = try c.makeFleet(tick: .milliseconds(20)) else { return }
        let observer = a.recorder()
        try a.scheduler.start(key: "fleet:cancel", duration: .milliseconds(400), observer: observer.observer)
        _ = observer.wait { $0.count >= 2 }
        c.expect(b.scheduler.remaining(key: "fleet:cancel") != nil, "the other scheduler does not see the countdown")
        c.expect(b.scheduler.activeKeys.contains("fleet:cancel"), "the other scheduler does not list the key")
        c.expect(b.scheduler.cancel(key: "fleet:cancel"), "cancel from the other scheduler returned false")
        let returned = b.now()
        c.expect(a.scheduler.remaining(key: "fleet:cancel") == nil, "the countdown runs on in the first scheduler after the cancel")
        c.expect(!a.scheduler.cancel(key: "fleet:cancel"), "a second cancel, from the first scheduler, returned true")
        // Past the countdown's deadline, so that a backend that never heard of the cancel has
        // ticked and finished by then.
        a.settle(.milliseconds(500))
        a.drain()
        let bound = nanoseconds(FleetTrial.silence)
        let late = observer.all.filter { $0.at > returned + bound }
        if let last = late.last {
            c.fail("\(late.count) event(s) began more than \(FleetTrial.silence) after the cancel from the other scheduler returned, the last \(DurationText.nanoseconds(Double(last.at - returned))) after it")
        }
        c.expect(observer.finishes.isEmpty, "the cancelled countdown finished")
        c.expectEqual(a.scheduler.activeCount, 0, "activeCount", "after the cancel")
        let after = observer.all.filter { $0.at > returned }.map { $0.at - returned }.max()
        c.figure(after.map { "the observer's last event began \(DurationText.nanoseconds(Double($0))) after the cancel from the other scheduler returned" }
            ?? "no event after the cancel from the other scheduler returned")
    }
}
