/// What happened to a configuration beyond its figures: whether the time limit cut it off,
/// and every breach of the contract seen on the way. Reports put it in words.
struct Outcome: Codable, Sendable, Equatable {
    /// Set when the time limit ended the configuration before every countdown finished.
    var cutOff: CutOff?
    /// Ticks a backend skipped to catch up after a stall (allowed: remaining says which).
    var skippedTicks = 0
    /// Events before their ideal time (a contract breach), finishes among them, and the
    /// earliest, in ms (negative).
    var earlyEvents = 0
    var earlyFinishes = 0
    var earliestMs = 0.0
    var doubledFinishes = 0
    var eventsAfterFinish = 0
    /// `start` errors by their description, and how often each was thrown.
    var startErrors: [String: Int] = [:]

    struct CutOff: Codable, Sendable, Equatable {
        /// The time limit from the first start: start phase, duration and grace.
        let limitMs: Double
        let finished: Int
        let countdowns: Int
        /// Countdowns never started: the start calls took so long that no start could end in time.
        let notStarted: Int
        let startPhaseMs: Double
        /// The share of countdowns whose first tick came more than one tick late, in %.
        let lateStartsPercent: Double?
        let startDelayP50Ms: Double?
        let startDelayIsLowerBound: Bool

        /// The countdowns that did not finish in time.
        var unfinished: Int { countdowns - finished }
    }

    static let complete = Outcome()

    var isComplete: Bool { cutOff == nil }

    /// Early events, doubled finishes or events after a finish.
    var breachesContract: Bool { earlyEvents > 0 || doubledFinishes > 0 || eventsAfterFinish > 0 }

    /// Several repeats or rounds as one: the worst cut-off, every breach added up.
    static func combined(_ outcomes: [Outcome]) -> Outcome {
        var all = Outcome()
        all.cutOff = outcomes.compactMap(\.cutOff).max { $0.unfinished < $1.unfinished }
        for o in outcomes {
            all.skippedTicks += o.skippedTicks
            all.earlyEvents += o.earlyEvents
            all.earlyFinishes += o.earlyFinishes
            all.earliestMs = min(all.earliestMs, o.earliestMs)
            all.doubledFinishes += o.doubledFinishes
            all.eventsAfterFinish += o.eventsAfterFinish
            all.startErrors.merge(o.startErrors, uniquingKeysWith: +)
        }
        return all
    }
}
