import Dispatch

/// The built-in backends by their command-line names, each able to make a scheduler, so the
/// benchmark, the conformance suite and tests can run "every backend" without listing types.
public struct CountdownBackend: Sendable, CustomStringConvertible {
    /// What a scheduler is made with. Fields a backend has no use for are ignored.
    public struct Options: Sendable {
        public var tickInterval: Duration
        public var deliveryQueue: DispatchQueue?
        /// For backends with a declared capacity; nil keeps the backend's default.
        public var capacity: Int?
        /// Nil keeps the backend's default.
        public var maximumDuration: Duration?
        /// The wall clock, for backends that read it (a clock that jumps, in tests); nil: `Date`.
        public var wallClock: CountdownClock?

        public init(
            tickInterval: Duration = .seconds(1),
            deliveryQueue: DispatchQueue? = nil,
            capacity: Int? = nil,
            maximumDuration: Duration? = nil,
            wallClock: CountdownClock? = nil
        ) {
            self.tickInterval = tickInterval
            self.deliveryQueue = deliveryQueue
            self.capacity = capacity
            self.maximumDuration = maximumDuration
            self.wallClock = wallClock
        }
    }

    /// `dispatch-source`, `operation-queue`, `run-loop`, `timestamp`.
    public let name: String
    /// `wall` or `continuous` for the timestamp backend; nil otherwise.
    public let variant: String?
    private let factory: @Sendable (Options) throws(CountdownError) -> any CountdownScheduler

    /// A backend of your own, made by `makeScheduler`, to sit beside the built-in ones.
    public init(
        name: String, variant: String? = nil,
        makeScheduler: @escaping @Sendable (Options) throws(CountdownError) -> any CountdownScheduler
    ) {
        self.name = name
        self.variant = variant
        self.factory = makeScheduler
    }

    /// `name`, or `name(variant)`.
    public var description: String { variant.map { "\(name)(\($0))" } ?? name }

    public func makeScheduler(_ options: Options = Options()) throws(CountdownError) -> any CountdownScheduler {
        try factory(options)
    }

    public static let dispatchSource = CountdownBackend(name: "dispatch-source", variant: nil) {
        (o: Options) throws(CountdownError) in
        try DispatchSourceScheduler(
            tickInterval: o.tickInterval,
            maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration,
            deliveryQueue: o.deliveryQueue)
    }

    /// `dispatch-source(compensated)`: the same timers, taking off every interval libdispatch
    /// reports missed, so a frozen process keeps its deadline.
    public static let dispatchSourceCompensated = CountdownBackend(name: "dispatch-source", variant: "compensated") {
        (o: Options) throws(CountdownError) in
        try DispatchSourceScheduler(
            tickInterval: o.tickInterval,
            maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration,
            deliveryQueue: o.deliveryQueue, compensatesMissedTicks: true)
    }

    public static let operationQueue = CountdownBackend(name: "operation-queue", variant: nil) {
        (o: Options) throws(CountdownError) in
        try OperationQueueScheduler(
            tickInterval: o.tickInterval,
            capacity: o.capacity ?? OperationQueueScheduler.defaultCapacity,
            maximumDuration: o.maximumDuration ?? OperationQueueScheduler.defaultMaximumDuration,
            deliveryQueue: o.deliveryQueue)
    }

    public static let runLoop = CountdownBackend(name: "run-loop", variant: nil) {
        (o: Options) throws(CountdownError) in
        try RunLoopScheduler(
            tickInterval: o.tickInterval,
            maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration,
            deliveryQueue: o.deliveryQueue)
    }

    /// With a wall clock (`followsWallClock`), `Options.wallClock` replaces it when given.
    /// A `tolerance` above zero lets ticks due within it share one wake-up (never early); with
    /// a tick interval shorter than twice the tolerance, half the tick is used instead, and the
    /// scheduler's profile says so.
    public static func timestamp(_ clock: CountdownClock, tolerance: Duration = .zero) -> CountdownBackend {
        CountdownBackend(name: "timestamp", variant: TimestampScheduler.variant(clock: clock, tolerance: tolerance)) {
            (o: Options) throws(CountdownError) in
            try TimestampScheduler(
                tickInterval: o.tickInterval,
                clock: clock.followsWallClock ? (o.wallClock ?? clock) : clock,
                tolerance: min(tolerance, o.tickInterval / 2),
                maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration,
                deliveryQueue: o.deliveryQueue)
        }
    }

    /// Every built-in backend, the timestamp backend once per clock.
    public static let all: [CountdownBackend] = [
        .dispatchSource, .operationQueue, .runLoop, .timestamp(.wall), .timestamp(.continuous),
    ]

    /// The strategies' options, measured beside them but not part of ``all`` (the benchmark's
    /// default sweep): `dispatch-source(compensated)`, and `timestamp(continuous~10ms)`, the
    /// recommended backend with a 10 ms coalescing tolerance.
    public static let options: [CountdownBackend] = [
        .dispatchSourceCompensated, .timestamp(.continuous, tolerance: .milliseconds(10)),
    ]

    /// ``all`` and ``options``.
    public static let allWithOptions: [CountdownBackend] = all + options

    /// The backends whose ``name`` or ``description`` is `name`: `timestamp` gives both clocks,
    /// `dispatch-source` both variants.
    public static func named(_ name: String) -> [CountdownBackend] {
        allWithOptions.filter { $0.name == name || $0.description == name }
    }
}
