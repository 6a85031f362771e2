import Countdown

/// The `fleet.kill` check: the race of `fleet.race`, then one member starts a few countdowns
/// that others attach to, and is killed by SIGKILL. Its countdowns live on in the store: the
/// others claim them (they are due after every other, so only a member that looks after the
/// whole fleet does), and every finish owed to a living member's observer is heard, once; only
/// the killed member's own observers go unheard.
enum FleetKillCheck {
    static let check = ConformanceCheck(
        "fleet.kill", .contract,
        "a fleet in processes with one member killed by SIGKILL mid-race: nothing owed to the living is lost",
        needsRealWorld: "a process killed with SIGKILL", body: run)

    static func run(_ c: CheckContext) throws {
        guard let (fleet, base) = try FleetTrialChecking.trial(c, members: max(3, c.options.fleet?.members ?? 3)) else { return }
        var trial = base
        let members = trial.members
        trial.workload = trial.workload.handingOver(max(4, trial.workload.keys.count / 8), from: 0, members: members)
        trial.kill = (member: 0, after: .nanoseconds(trial.workload.lastOffset + 20_000_000))
        let report = try FleetTrialChecking.run(trial, fleet, in: c)
        if report.killed == 0 { c.fail("the member meant to be killed was not") }
    }
}
