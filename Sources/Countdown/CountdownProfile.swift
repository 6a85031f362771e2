/// What a backend declares about itself: its name, its mechanism, and the outcomes that
/// tell the strategies apart. Declared, not assumed: the conformance suite checks
/// that what it observes matches, and the results show both side by side.
public struct CountdownProfile: Sendable, Hashable {
    /// When the whole process is frozen for a while (an app suspended in the background,
    /// or `SIGSTOP` … `SIGCONT`), where does the countdown end up?
    public enum Suspension: String, Sendable, Hashable, Codable, CaseIterable {
        /// Time is counted in ticks; the frozen ticks are not counted, so the countdown
        /// finishes about the length of the freeze late.
        case finishesLateByFreeze = "late-by-freeze"
        /// Remaining time is read from a clock; the countdown finishes on its original
        /// deadline (or at once on resume, if the deadline passed during the freeze).
        case keepsDeadline = "keeps-deadline"
    }

    /// When the system's wall clock is changed mid-countdown, what happens?
    public enum WallClockJump: String, Sendable, Hashable, Codable, CaseIterable {
        /// Nothing: the backend never reads the wall clock.
        case immune
        /// The deadline moves with the wall clock: forward ends it early, back delays it.
        case movesCountdown = "moves-countdown"
    }

    /// Does the finish error grow with the countdown's length?
    public enum Drift: String, Sendable, Hashable, Codable, CaseIterable {
        /// Fires stay on a fixed grid (start + k·T): the error does not grow with the length.
        case bounded
        /// Each wait starts when the last one ended, so every wake-up's lateness adds up.
        case accumulates
    }

    /// While one observer is slow (it blocks the delivery queue), what happens to the others?
    public enum SlowObserver: String, Sendable, Hashable, Codable, CaseIterable {
        /// Their events wait in the queue, but their countdowns keep time.
        case delaysDeliveryOnly = "delays-delivery-only"
        /// Their countdowns stop counting too, and finish late.
        case stallsCountdowns = "stalls-countdowns"
    }

    /// Where the countdowns live, and so who shares them.
    public enum Sharing: String, Sendable, Hashable, Codable, CaseIterable {
        /// In this scheduler's memory: every scheduler has countdowns of its own.
        case process
        /// In a store that several schedulers (processes, servers) reach: schedulers made on
        /// one namespace share every countdown (a start in one is an attach in another).
        case fleet
    }

    /// The command-line name: `dispatch-source`, `operation-queue`, `run-loop`, `timestamp`.
    public var name: String
    /// The variant, when a backend has more than one (`wall`, `continuous`); else nil.
    public var variant: String?
    /// One line on how it times: "one DispatchSourceTimer per countdown, counting ticks".
    public var mechanism: String
    /// The threads it uses, and how their number grows with the countdowns.
    public var threads: String
    /// What a frozen process (an app suspended, SIGSTOP) does to its countdowns.
    public var suspension: Suspension
    /// What setting the wall clock does to its countdowns.
    public var wallClockJump: WallClockJump
    /// Whether its ticks stray from start + k·T as they go.
    public var drift: Drift
    /// What an observer that blocks the delivery queue does to the other countdowns.
    public var slowObserver: SlowObserver
    /// The most countdowns it runs at once; `start` beyond it throws. Nil: no fixed limit.
    public var capacity: Int?
    /// The longest duration it accepts; longer ones throw.
    public var maximumDuration: Duration
    /// How late a tick may come by design so that timers due close together share a wake-up,
    /// as `Timer.tolerance`: never early, at most this late. Zero: no coalescing.
    public var tolerance: Duration
    /// Whether its countdowns are this process's own or shared by a fleet.
    public var sharing: Sharing

    /// A profile as a backend declares it; the conformance suite's profile checks judge each
    /// answer against what the backend does. `name`, `variant`, `mechanism`, `threads`,
    /// `suspension`, `wallClockJump`, `drift`, `slowObserver`, `capacity`, `maximumDuration`,
    /// `tolerance` and `sharing` are the properties of the same names.
    public init(
        name: String,
        variant: String? = nil,
        mechanism: String,
        threads: String,
        suspension: Suspension,
        wallClockJump: WallClockJump,
        drift: Drift = .bounded,
        slowObserver: SlowObserver = .delaysDeliveryOnly,
        capacity: Int?,
        maximumDuration: Duration,
        tolerance: Duration = .zero,
        sharing: Sharing = .process
    ) {
        self.name = name
        self.variant = variant
        self.mechanism = mechanism
        self.threads = threads
        self.suspension = suspension
        self.wallClockJump = wallClockJump
        self.drift = drift
        self.slowObserver = slowObserver
        self.capacity = capacity
        self.maximumDuration = maximumDuration
        self.tolerance = tolerance
        self.sharing = sharing
    }

    /// `name` alone, or `name(variant)`: `timestamp(wall)`.
    package var displayName: String {
        variant.map { "\(name)(\($0))" } ?? name
    }
}
