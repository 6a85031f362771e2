import Countdown

/// The `fleet.cancel` check: a countdown started in one scheduler of a fleet is cancelled from
/// another; it ends everywhere, and its observer never hears a finish.
enum FleetCancelCheck {
    static let check = ConformanceCheck(
        "fleet.cancel", .contract,
        "a fleet: a cancel from another scheduler ends the countdown everywhere; no finish",
        body: run)

    static func run(_ c: CheckContext) throws {
        guard let (a, b) = try c.makeFleet(tick: .milliseconds(20)) else { return }
        let observer = a.recorder()
        try a.scheduler.start(key: "fleet:cancel", duration: .milliseconds(400), observer: observer.observer)
        _ = observer.wait { $0.count >= 2 }
        c.expect(b.scheduler.remaining(key: "fleet:cancel") != nil, "the other scheduler does not see the countdown")
        c.expect(b.scheduler.activeKeys.contains("fleet:cancel"), "the other scheduler does not list the key")
        c.expect(b.scheduler.cancel(key: "fleet:cancel"), "cancel from the other scheduler returned false")
        c.expect(a.scheduler.remaining(key: "fleet:cancel") == nil, "the countdown runs on in the first scheduler after the cancel")
        c.expect(!a.scheduler.cancel(key: "fleet:cancel"), "a second cancel, from the first scheduler, returned true")
        // The observer's scheduler hears of the cancel one hop later; give it that (a generous
        // second: a loaded 2-core machine can hold a thread that long), then silence.
        a.settle(.seconds(1))
        a.drain()
        let heard = observer.count
        a.settle(.milliseconds(600))
        a.drain()
        c.expect(observer.count == heard, "\(observer.count - heard) events more than a second after the cancel")
        c.expect(observer.finishes.isEmpty, "the cancelled countdown finished")
        c.expectEqual(a.scheduler.activeCount, 0, "activeCount", "after the cancel")
    }
}
