/// The checks of a fleet: schedulers made on one namespace share every countdown (a backend
/// whose profile declares `sharing: .fleet`, the Redis strategies). The first three make two
/// schedulers in this process (`CheckContext.makeFleet`); the others run members in processes
/// of their own (``CountdownConformance/Fleet``), with faults between them. Each is not
/// applicable to a backend whose countdowns are its own. One file per check.
enum FleetChecks {
    static let all: [ConformanceCheck] = [
        FleetOneKeyCheck.check, FleetCancelCheck.check, FleetAttachCheck.check,
        FleetRaceCheck.check, FleetFaultsCheck.check, FleetKillCheck.check,
    ]
}
