import Countdown

/// The `fleet.race` check: members in processes of their own start, attach, cancel, pause and
/// resume the same keys within a millisecond of one another. Some order of the calls must
/// explain every answer and every event; a replaced, cancelled or paused observer hears nothing
/// that begins more than 100 ms after the call that did it returned; every finish owed is heard
/// once, never early; no member holds an observer when everything has ended.
enum FleetRaceCheck {
    static let check = ConformanceCheck(
        "fleet.race", .contract,
        "a fleet in processes: calls on one key from several members at once, judged against the contract's model",
        needsRealWorld: "members are processes of their own, racing on the real clock", body: run)

    static func run(_ c: CheckContext) throws {
        guard let (fleet, trial) = try FleetTrialChecking.trial(c) else { return }
        _ = try FleetTrialChecking.run(trial, fleet, in: c)
    }
}
