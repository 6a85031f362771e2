import Countdown

/// The `fleet.race` check: members in processes of their own start, attach, cancel, pause and
/// resume the same keys within a millisecond of one another. Some order of the calls must
/// explain every answer and every event; a replaced, cancelled or paused observer hears nothing
/// that begins more than 100 ms after the call that did it returned; every finish owed is heard
/// once, never early; no member holds an observer when everything has ended. With the store's
/// address (``CountdownConformance/Fleet/store``), the members reach it through the suite's
/// ``FaultProxy``, which holds each answer up to 10 ms, as a network whose paths and queues
/// differ does: a call's answer and another member's message about it arrive in either order.
enum FleetRaceCheck {
    static let check = ConformanceCheck(
        "fleet.race", .contract,
        "a fleet in processes: calls on one key from several members at once, judged against the contract's model",
        needsRealWorld: "members are processes of their own, racing on the real clock", body: run)

    static func run(_ c: CheckContext) throws {
        guard let (fleet, base) = try FleetTrialChecking.trial(c) else { return }
        var trial = base
        var proxy: FaultProxy?
        if let store = fleet.store {
            proxy = try FaultProxy(upstream: store)
            proxy!.latency(upTo: .milliseconds(10))
            trial.storeAddress = proxy!.address
            trial.proxy = proxy
        }
        defer { proxy?.stop() }
        _ = try FleetTrialChecking.run(trial, fleet, in: c)
        if let proxy, proxy.connections == 0 {
            c.inconclusive("no member connected through the suite's proxy: the factory must connect to environment.storeAddress")
        }
    }
}
