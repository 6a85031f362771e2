/// The checks of a backend that keeps a ``Countdown/CountdownStore`` (a
/// ``Countdown/KeyedCountdownScheduler``), one per promise of the store, each in a file of its
/// own: not applicable to a backend that keeps none. In real time: a store's records are kept on
/// the wall and boot clocks, which virtual time does not move.
enum StoreChecks {
    static let all: [ConformanceCheck] = [StoreFinishCheck.check, StoreRestoreCheck.check, StoreWaitCheck.check, StoreBadFileCheck.check]

    static let realWorld = "a store's records are kept on the wall and boot clocks, which virtual time does not move"
}
