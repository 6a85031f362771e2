/// What tells the strategies apart, observed in-process and compared with what each backend
/// declares in its `CountdownProfile` (a frozen process is observed by `countdown-bench
/// suspend`), each check in a file of its own.
enum ProfileChecks {
    static let all: [ConformanceCheck] = [
        ProfileWallClockCheck.check, ProfileSlowObserverCheck.check, ProfileDriftCheck.check, ProfileCapacityCheck.check,
    ]
}
