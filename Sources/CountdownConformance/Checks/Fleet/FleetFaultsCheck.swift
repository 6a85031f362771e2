import Countdown

/// The `fleet.faults` check: the race of `fleet.race`, with the members connected through the
/// suite's ``FaultProxy``: about one answer in six of each connection closed before the client
/// reads it, at random gaps so that every call of a client's loop is hit (the call was made, its
/// answer lost: a call, a claim, a blocking read alike), every connection reset once mid-race.
/// Every call must be safe to send again: judged as `fleet.race` judges, nothing lost, doubled or held.
enum FleetFaultsCheck {
    static let check = ConformanceCheck(
        "fleet.faults", .contract,
        "a fleet in processes, through a proxy that drops answers before they are read and resets connections",
        needsRealWorld: "members are processes of their own, behind a real TCP proxy", body: run)

    static func run(_ c: CheckContext) throws {
        guard let (fleet, base) = try FleetTrialChecking.trial(c) else { return }
        guard let store = fleet.store else {
            c.notApplicable("it puts the suite's proxy in front of the store: give Options.fleet its address (store)")
            return
        }
        let proxy = try FaultProxy(upstream: store)
        defer { proxy.stop() }
        var trial = base
        trial.storeAddress = proxy.address
        trial.proxy = proxy
        trial.fault = .dropAnswers(every: 6)
        trial.resetAfter = .nanoseconds(trial.workload.lastOffset / 2)
        let report = try FleetTrialChecking.run(trial, fleet, in: c)
        if proxy.connections == 0 {
            c.inconclusive("no member connected through the suite's proxy: the factory must connect to environment.storeAddress")
        } else if report.faultsInjected == 0 {
            c.inconclusive("the proxy dropped no answer: too few calls went through it")
        }
    }
}
