import Countdown
import CountdownSupport

/// What the fleet checks that run members in processes of their own share: whether they apply,
/// the trial, and the verdict from its report.
enum FleetTrialChecking {
    /// Countdowns race for this long: far longer than a race (a millisecond), so that none runs
    /// out while its calls race, unless a loaded machine spreads them (the key is then not judged).
    static let duration = Duration.milliseconds(1500)
    static let tick = Duration.milliseconds(200)

    /// The trial's settings for this check, or nil (the check marked not applicable) when the
    /// backend's countdowns are its own or the suite was given no way to start members.
    static func trial(_ c: CheckContext, members: Int? = nil) throws -> (CountdownConformance.Fleet, FleetTrial)? {
        let probe = try c.makeScheduler(tick: tick)
        let sharing = probe.scheduler.profile.sharing
        c.release(probe.scheduler)
        probe.scheduler.shutdown()
        guard sharing == .fleet else {
            c.notApplicable("its countdowns are its own (profile sharing: \(sharing.rawValue)): there is no fleet to share them")
            return nil
        }
        guard let fleet = c.options.fleet else {
            c.notApplicable("it runs members in processes of their own: give the suite Options.fleet (how to start them: a Relaunch of this test binary)")
            return nil
        }
        let count = members ?? fleet.members
        let workload = FleetWorkload.races(
            keys: fleet.keys, members: count, spread: .milliseconds(Int64(10 * fleet.keys)), duration: duration, seed: c.options.seed)
        var trial = FleetTrial(members: count, workload: workload, tick: tick, namespace: Harness.freshNamespace())
        trial.storeAddress = fleet.store
        return (fleet, trial)
    }

    /// Runs the trial and records every failure it found; the figure is its summary.
    static func run(_ trial: FleetTrial, _ fleet: CountdownConformance.Fleet, in c: CheckContext) throws -> FleetTrialReport {
        let report = try trial.run(suite: c.suite, relaunch: fleet.relaunch) { c.waitingForTurn($0) }
        for failure in report.failures { c.fail(failure) }
        if report.failures.isEmpty, !report.passed { c.fail("the trial failed: \(report.summary)") }
        if report.inconclusiveKeys * 2 > report.keys {
            c.inconclusive("\(report.inconclusiveKeys) of \(report.keys) keys' calls did not race (spread over more than half a countdown): the machine was too loaded to judge")
        }
        c.figure("\(report.summary) [seed \(c.options.seed)]")
        return report
    }
}
