/// The checks of a fleet: two schedulers made on one namespace share every countdown (a
/// backend whose profile declares `sharing: .fleet`, the Redis strategies). Each check makes
/// its fleet with `CheckContext.makeFleet`, and is not applicable to a backend whose countdowns
/// are its own. One file per check.
enum FleetChecks {
    static let all: [ConformanceCheck] = [FleetOneKeyCheck.check, FleetCancelCheck.check, FleetAttachCheck.check]
}
