/// The contract checks, one per point of the contract in `CountdownScheduler`'s documentation,
/// each in a file of its own.
enum ContractChecks {
    static let all: [ConformanceCheck] = [
        StartCheck.check, TicksCheck.check, FinishCheck.check, AttachCheck.check, AttachOnlyCheck.check,
        CancelCheck.check, CallsFromObserverCheck.check, PauseResumeCheck.check, BadInputCheck.check, ReentrancyCheck.check,
        ConcurrencyCheck.check, OneKeyCheck.check, DeliveryCheck.check, ObserverReleaseCheck.check, ShutdownCheck.check,
        KeysCheck.check, DistinctKeysCheck.check, CountsCheck.check, DurationEdgesCheck.check, ReleaseCheck.check, EventsCheck.check, LifecycleCheck.check,
        RandomizedCheck.check, ReplayCheck.check,
    ]
}
