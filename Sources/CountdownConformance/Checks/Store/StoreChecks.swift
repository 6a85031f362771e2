/// The checks of a backend that keeps a ``Countdown/CountdownStore`` (a
/// ``Countdown/KeyedCountdownScheduler``), one per promise of the store, each in a file of its
/// own: not applicable to a backend that keeps none. In real time on the system's clocks; in
/// virtual time on a store whose clocks read the scheduler's own (``StoreFolder``).
enum StoreChecks {
    static let all: [ConformanceCheck] = [StoreFinishCheck.check, StoreRestoreCheck.check, StoreWaitCheck.check, StoreBadFileCheck.check]
}
