import Countdown
import CountdownSupport
import Dispatch

/// The benchmark's catalogue: every built-in backend by its command-line name, its declared
/// profile (read without making a scheduler), and how to make one. The benchmark, its
/// conformance command and the tests run "every backend" from it without listing types.
public struct CountdownBackend: Sendable, CustomStringConvertible {
    /// What the benchmark makes a scheduler with. A backend takes what it has a use for (the
    /// capacity only where it declares one, the wall clock only where it reads it).
    public struct Options: Sendable {
        public var tickInterval: Duration = .seconds(1)
        public var deliveryQueue: DispatchQueue?
        /// Nil keeps the backend's default.
        public var capacity: Int?
        /// Nil keeps the backend's default.
        public var maximumDuration: Duration?
        /// The wall clock, for backends that read it (a clock that jumps, in tests); nil: `Date`.
        public var wallClock: CountdownClock?
        /// Where a fleet backend keeps its countdowns; nil: a namespace of its own.
        public var namespace: String?
        /// Where a fleet backend reaches its store (`host:port`), when the conformance suite
        /// says so (its member processes, its fault proxy); nil: the backend's own.
        public var storeAddress: String?

        public init(
            tickInterval: Duration = .seconds(1), deliveryQueue: DispatchQueue? = nil, capacity: Int? = nil,
            maximumDuration: Duration? = nil, wallClock: CountdownClock? = nil, namespace: String? = nil,
            storeAddress: String? = nil
        ) {
            self.storeAddress = storeAddress
            self.tickInterval = tickInterval
            self.deliveryQueue = deliveryQueue
            self.capacity = capacity
            self.maximumDuration = maximumDuration
            self.wallClock = wallClock
            self.namespace = namespace
        }
    }

    /// `dispatch-source`, `operation-queue`, `run-loop`, `timestamp`, `task`.
    public let name: String
    /// `compensated`, `wall`, `continuous`, `continuous~10ms`; nil when there is one kind.
    public let variant: String?
    private let declared: (@Sendable (Options) -> CountdownProfile)?
    private let factory: @Sendable (Options) throws(CountdownError) -> any CountdownScheduler

    /// A backend of your own, made by `makeScheduler`, to sit beside the built-in ones; without
    /// `profile`, its profile is read from a scheduler made for the purpose.
    public init(
        name: String, variant: String? = nil, profile: (@Sendable (Options) -> CountdownProfile)? = nil,
        makeScheduler: @escaping @Sendable (Options) throws(CountdownError) -> any CountdownScheduler
    ) {
        self.name = name
        self.variant = variant
        self.declared = profile
        self.factory = makeScheduler
    }

    /// `name`, or `name(variant)`.
    public var description: String { variant.map { "\(name)(\($0))" } ?? name }

    func makeScheduler(_ options: Options = Options()) throws(CountdownError) -> any CountdownScheduler {
        try factory(options)
    }

    /// What a scheduler made with `options` declares.
    func profile(_ options: Options = Options()) throws(CountdownError) -> CountdownProfile {
        if let declared { return declared(options) }
        let scheduler = try factory(options)
        defer { scheduler.shutdown() }
        return scheduler.profile
    }

    static func dispatchSource(compensated: Bool) -> CountdownBackend {
        CountdownBackend(name: "dispatch-source", variant: compensated ? "compensated" : nil) { o in
            DispatchSourceScheduler.profile(
                maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration, compensatesMissedTicks: compensated)
        } makeScheduler: { (o: Options) throws(CountdownError) in
            try DispatchSourceScheduler(
                tickInterval: o.tickInterval,
                maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration,
                deliveryQueue: o.deliveryQueue, compensatesMissedTicks: compensated)
        }
    }

    static let dispatchSource = dispatchSource(compensated: false)

    /// The same timers, taking off every interval libdispatch reports missed, so a frozen
    /// process keeps its deadline.
    static let dispatchSourceCompensated = dispatchSource(compensated: true)

    static let operationQueue = CountdownBackend(name: "operation-queue") { o in
        OperationQueueScheduler.profile(
            capacity: o.capacity ?? OperationQueueScheduler.defaultCapacity,
            maximumDuration: o.maximumDuration ?? OperationQueueScheduler.defaultMaximumDuration)
    } makeScheduler: { (o: Options) throws(CountdownError) in
        try OperationQueueScheduler(
            tickInterval: o.tickInterval,
            capacity: o.capacity ?? OperationQueueScheduler.defaultCapacity,
            maximumDuration: o.maximumDuration ?? OperationQueueScheduler.defaultMaximumDuration,
            deliveryQueue: o.deliveryQueue)
    }

    static let runLoop = CountdownBackend(name: "run-loop") { o in
        RunLoopScheduler.profile(maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration)
    } makeScheduler: { (o: Options) throws(CountdownError) in
        try RunLoopScheduler(
            tickInterval: o.tickInterval,
            maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration,
            deliveryQueue: o.deliveryQueue)
    }

    /// With a wall clock (`followsWallClock`), `Options.wallClock` replaces it when given.
    /// A `tolerance` above zero lets ticks due within it share one wake-up (never early); with
    /// a tick interval shorter than twice the tolerance, half the tick is used instead, and the
    /// profile says so.
    static func timestamp(_ clock: CountdownClock, tolerance: Duration = .zero) -> CountdownBackend {
        CountdownBackend(name: "timestamp", variant: TimestampScheduler.variant(clock: clock, tolerance: tolerance)) { o in
            TimestampScheduler.profile(
                clock: clock, tolerance: min(tolerance, o.tickInterval / 2),
                maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration)
        } makeScheduler: { (o: Options) throws(CountdownError) in
            try TimestampScheduler(
                tickInterval: o.tickInterval,
                clock: clock.followsWallClock ? (o.wallClock ?? clock) : clock,
                tolerance: min(tolerance, o.tickInterval / 2),
                maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration,
                deliveryQueue: o.deliveryQueue)
        }
    }

    static let task = CountdownBackend(name: "task") { o in
        TaskScheduler.profile(maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration)
    } makeScheduler: { (o: Options) throws(CountdownError) in
        try TaskScheduler(
            tickInterval: o.tickInterval,
            maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration,
            deliveryQueue: o.deliveryQueue)
    }

    /// The virtual-time scheduler, for tests: listed and judged by the conformance suite (in
    /// virtual time), never measured (`run` and `suspend` refuse it).
    static let virtual = CountdownBackend(name: "virtual") { o in
        VirtualScheduler.profile(capacity: o.capacity, maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration)
    } makeScheduler: { (o: Options) throws(CountdownError) in
        try VirtualScheduler(
            tickInterval: o.tickInterval, maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration,
            capacity: o.capacity, deliveryQueue: o.deliveryQueue)
    }

    /// Whether it is for tests (``virtual``): nothing real to measure.
    var isForTests: Bool { name == Self.virtual.name }

    /// The strategies, the timestamp backend once per clock: the default sweep.
    static let all: [CountdownBackend] = [
        .dispatchSource, .operationQueue, .runLoop, .timestamp(.wall), .timestamp(.continuous), .task,
    ]

    /// Variants measured beside the strategies but not in the default sweep:
    /// `dispatch-source(compensated)`, and `timestamp(continuous~10ms)`, the recommended backend
    /// with a 10 ms coalescing tolerance.
    static let variants: [CountdownBackend] = [
        .dispatchSourceCompensated, .timestamp(.continuous, tolerance: .milliseconds(10)),
    ]

    /// ``all`` and ``variants``.
    static let allWithVariants: [CountdownBackend] = all + variants

    /// `backend` beside sleeping operation-queue workers, which share libdispatch's pool with it.
    static func besideSleepers(_ backend: CountdownBackend) -> CountdownBackend {
        wrapped(backend, suffix: PoolSharingScheduler.variantSuffix, profile: PoolSharingScheduler.profile) {
            (inner) throws(CountdownError) in try PoolSharingScheduler(besideSleepers: inner)
        }
    }

    /// Configurations of a backend in company, chosen only by their full name
    /// (`task(beside-20-sleepers)`): neither `all` nor a backend's name selects them, so that
    /// the conformance suite and the suspension experiment judge each backend alone. The task
    /// backend, whose wake-ups wait for the pool, and the recommended one, whose do not.
    static let companies: [CountdownBackend] = [.besideSleepers(.task), .besideSleepers(.timestamp(.continuous))]

    /// `backend` keeping its countdowns in a `CountdownStore` (`timestamp(continuous+store)`):
    /// every start, cancel and finish writes the file.
    static func stored(_ backend: CountdownBackend) -> CountdownBackend {
        wrapped(backend, suffix: StoredScheduler.variantSuffix, profile: StoredScheduler.profile) {
            (inner) throws(CountdownError) in
            guard let keyed = inner as? KeyedCountdownScheduler else {
                fatalError("\(backend) has no restore(from:): only built-in backends keep a store")
            }
            return StoredScheduler(keyed)
        }
    }

    /// The recommended backend with a store, chosen only by its full name, as a company is:
    /// what persistence costs at scale.
    static let storedOnes: [CountdownBackend] = [.stored(.timestamp(.continuous))]

    /// `backend`'s schedulers inside one of the benchmark's own (a company, a store), whose
    /// variant adds `suffix` to the backend's and whose profile `profile` derives from its.
    private static func wrapped(
        _ backend: CountdownBackend, suffix: String, profile: @escaping @Sendable (CountdownProfile) -> CountdownProfile,
        make: @escaping @Sendable (any CountdownScheduler) throws(CountdownError) -> any CountdownScheduler
    ) -> CountdownBackend {
        let declared = backend.declared.map { declared in { @Sendable (o: Options) in profile(declared(o)) } }
        return CountdownBackend(name: backend.name, variant: variant(backend.variant, plus: suffix), profile: declared) {
            (o: Options) throws(CountdownError) in try make(backend.makeScheduler(o))
        }
    }

    /// `inner+suffix` (`continuous+store`), or `suffix` for a backend of one kind.
    static func variant(_ inner: String?, plus suffix: String) -> String {
        ((inner.map { [$0] } ?? []) + [suffix]).joined(separator: "+")
    }

    /// Command-line names, each once: `dispatch-source`, `operation-queue`, …, `virtual`, and
    /// `redis` in a build with the Redis trait.
    static var names: [String] {
        var seen: [String] = []
        for backend in allWithVariants + [virtual] + fleet + added where !seen.contains(backend.name) { seen.append(backend.name) }
        return seen
    }

    /// The backends whose ``name`` or ``description`` is `name`: `timestamp` gives every clock,
    /// `dispatch-source` both variants, `redis` both Redis strategies. The Redis ones are chosen
    /// by name only, never by `all`: they need a server.
    static func named(_ name: String) -> [CountdownBackend] {
        (allWithVariants + [virtual] + fleet + added).filter { $0.name == name || $0.description == name }
            + (companies + storedOnes).filter { $0.description == name }
    }

    /// Backends a package of its own added (``BenchCommand/run(arguments:adding:)``): chosen by
    /// name, as the Redis ones are, never by `all`.
    private static let addedBackends = Locked<[CountdownBackend]>([])
    static var added: [CountdownBackend] { addedBackends.withLock { $0 } }
    static func add(_ backends: [CountdownBackend]) {
        guard !backends.isEmpty else { return }
        addedBackends.withLock { $0.append(contentsOf: backends) }
    }

    /// A comma list of names, or `all`: every strategy and variant, and with `includingTests`
    /// the virtual scheduler too (listed and judged, never measured).
    static func select(_ list: String, includingTests: Bool = false) throws(UsageError) -> [CountdownBackend] {
        // Every name must be known: a list with a misspelt one is refused whole, not run without it.
        var backends: [CountdownBackend] = []
        for name in list.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            let found = name == "all" ? allWithVariants + (includingTests ? [virtual] : []) : named(name)
            guard !found.isEmpty else {
                let choices = names + (companies + storedOnes).map(\.description) + ["all"]
                throw UsageError("unknown backend '\(name)'; choose from \(choices.joined(separator: ", "))")
            }
            backends += found.filter { new in !backends.contains { $0.description == new.description } }
        }
        return backends
    }

    /// `select`, refusing the virtual scheduler: `command` measures real timers.
    static func selectMeasured(_ list: String, for command: String) throws(UsageError) -> [CountdownBackend] {
        let backends = try select(list)
        if let test = backends.first(where: \.isForTests) {
            throw UsageError("\(command) measures real timers, and \(test) is for tests: its clock moves only when a test advances it")
        }
        return backends
    }
}
