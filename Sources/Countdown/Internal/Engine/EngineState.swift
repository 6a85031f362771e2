/// What the engine's lock guards: the ``CountdownTable``, which decides, and the
/// ``DeliveryPipeline``, which its decisions append to, side by side. One lock for both: the
/// order events are appended in is the order they were decided in, whichever thread decided
/// them, and a start takes the lock once.
///
/// Its calls answer with a ``CountdownTable/Decision``, as the table's do, handing the table
/// the pipeline; the engine's hot calls (a start, a cancel, a batch of fires) reach the table
/// directly with both. A test drives it with made-up instants and reads what was decided from
/// ``pipeline`` (``DeliveryPipeline/takePending()``). The table's fields read through it
/// (`state.changes` is `state.table.changes`).
@dynamicMemberLookup
struct EngineState<Progress: CountdownProgress, Handle> {
    typealias Table = CountdownTable<Progress, Handle>
    typealias Decision<Answer> = Table.Decision<Answer>
    typealias FireResult = Table.FireResult
    typealias WorkerStep = Table.WorkerStep
    typealias Registration = Table.Registration

    var table: Table
    var pipeline = Table.Pipeline()

    init(rules: Table.Rules) {
        table = Table(rules: rules)
    }

    subscript<Value>(dynamicMember field: KeyPath<Table, Value>) -> Value { table[keyPath: field] }

    // MARK: - The scheduler's API

    mutating func start(
        key: String, hash: KeyIndex.Hash? = nil, duration: Duration, observer: CountdownObserver?, now: Moment,
        deliveredBelow: UInt64 = 0
    ) throws(CountdownError) -> Decision<CountdownStart> {
        try table.start(
            key: key, hash: hash ?? table.indexByKey.hash(key), duration: duration, observer: observer, now: now,
            deliveredBelow: deliveredBelow, &pipeline)
    }

    mutating func attach(
        key: String, observer: CountdownObserver?, ended: (@Sendable () -> Void)? = nil, now: Moment
    ) -> Decision<Duration?> {
        table.attach(key: key, observer: observer, ended: ended, now: now, &pipeline)
    }

    mutating func attach(
        key: String, observer: CountdownObserver?, ended: (@Sendable () -> Void)? = nil, now: Moment,
        registration: inout Table.Registration?
    ) -> Decision<Duration?> {
        table.attach(key: key, observer: observer, ended: ended, now: now, registration: &registration, &pipeline)
    }

    mutating func detach(key: String, registration: Table.Registration) -> Decision<Void> {
        table.detach(key: key, registration: registration)
    }

    mutating func cancel(key: String, hash: KeyIndex.Hash? = nil, deliveredBelow: UInt64 = 0) -> Decision<Bool> {
        table.cancel(key: key, hash: hash ?? table.indexByKey.hash(key), deliveredBelow: deliveredBelow)
    }

    mutating func pause(key: String, now: Moment) -> Decision<Bool> { table.pause(key: key, now: now, &pipeline) }

    mutating func resume(key: String, now: Moment) -> Decision<Bool> { table.resume(key: key, now: now, &pipeline) }

    func remaining(key: String, now: Moment) -> Duration? { table.remaining(key: key, now: now) }

    func observation(of key: String) -> (registration: Table.Registration, observed: Bool)? {
        table.observation(of: key)
    }

    // MARK: - Told by the mechanisms

    mutating func keep(_ handle: Handle, for id: CountdownID) -> Decision<Void> { table.keep(handle, for: id) }

    mutating func fire(_ id: CountdownID, now: Moment, intervals: Int = 1) -> Decision<Table.FireResult> {
        table.fire(id, now: now, intervals: intervals, &pipeline)
    }

    mutating func workerStep(_ id: CountdownID, now: Moment) -> Decision<Table.WorkerStep> {
        table.workerStep(id, now: now, &pipeline)
    }

    // MARK: - The app's lifecycle, the store, the shutdown

    mutating func enteredBackground(now: Moment, boot: Int64) -> Decision<Void> {
        table.enteredBackground(now: now, boot: boot)
    }

    mutating func enteredForeground(now: Moment, boot: Int64) -> Decision<Void> {
        table.enteredForeground(now: now, boot: boot, &pipeline)
    }

    mutating func restore(
        _ records: [CountdownRecord], now: Moment, wall: Int64, boot: Int64, bootID: String?, storePath: String
    ) throws(CountdownStoreError) -> Decision<CountdownRestoration> {
        try table.restore(records, now: now, wall: wall, boot: boot, bootID: bootID, storePath: storePath, &pipeline)
    }

    func snapshot(changedSince written: UInt64?, now: Moment, wall: Int64, boot: Int64, bootID: String?)
        -> StoreWriter.Snapshot?
    {
        table.snapshot(changedSince: written, now: now, wall: wall, boot: boot, bootID: bootID)
    }

    mutating func shutdown() -> Decision<Bool> { table.shutdown() }
}
