import Countdown

/// Everything the members of a fleet trial did and heard, with the instants they took
/// (`CLOCK_MONOTONIC`, one clock for every process on the machine): what the judge reads.
public struct FleetHistory: Sendable {
    /// One call a member made.
    public struct Call: Sendable {
        /// Which call of the protocol.
        public enum Operation: String, Sendable, CaseIterable {
            /// `start(key:duration:observer:)`.
            case start
            /// `attach(key:observer:)`.
            case attach
            /// `cancel(key:)`.
            case cancel
            /// `pause(key:)`.
            case pause
            /// `resume(key:)`.
            case resume
        }

        /// What the call answered.
        public enum Answer: Sendable, Equatable {
            /// A start that started a countdown.
            case started
            /// A start or attach that found one running, with its time left in nanoseconds.
            case attached(remaining: Int64)
            /// An attach that found nothing.
            case nothing
            /// A cancel, pause or resume that answered true.
            case yes
            /// A cancel, pause or resume that answered false.
            case no
            /// The call threw: what it did is unknown.
            case failed(String)
        }

        /// Unique in the trial; a start's or attach's observer has the same id.
        public let id: Int
        /// The member (0-based) that made it.
        public let member: Int
        /// The countdown's key.
        public let key: String
        /// Which call.
        public let operation: Operation
        /// Nanoseconds; for a start.
        public let duration: Int64
        /// Whether the trial made it after the race, to end what was left (a paused countdown).
        public let isCleanup: Bool
        /// The instant the trial asked for it: its member makes it then or later, never before.
        public var scheduled: UInt64?
        /// When it was made (`CLOCK_MONOTONIC`, nanoseconds); nil when its member never said
        /// (a member says when a call began only once it has returned: a member killed meanwhile
        /// may have made it).
        public var invoked: UInt64?
        /// Nil while it has not returned (its member was killed, or it hangs).
        public var returned: UInt64?
        /// What it answered; nil while it has not returned.
        public var answer: Answer?

        /// The earliest it may have begun: when it was made, or, if its member never said, the
        /// instant it was asked for.
        var earliest: UInt64? { invoked ?? scheduled }
    }

    /// One event an observer heard.
    public struct Event: Sendable {
        /// The id of the start or attach whose observer heard it.
        public let observer: Int
        /// A tick or the finish.
        public let kind: CountdownEvent.Kind
        /// The time left it carried, in nanoseconds.
        public let remaining: Int64
        /// When the observer heard it (`CLOCK_MONOTONIC`, nanoseconds).
        public let at: UInt64
    }

    /// Every call, by its id.
    public var calls: [Int: Call] = [:]
    /// What each observer heard, by its call's id, in order.
    public var events: [Int: [Event]] = [:]
    /// The instant each killed member was killed.
    public var killed: [Int: UInt64] = [:]
    /// Observers each member still held at its census, by their calls' ids (-1: it gave none).
    public var held: [Int: [Int]] = [:]

    /// An empty history, for the trial to fill in.
    public init() {}
}

extension FleetHistory.Call.Answer {
    /// As a member writes it on one line.
    var text: String {
        switch self {
        case .started: "started"
        case .attached(let remaining): "attached:\(remaining)"
        case .nothing: "nothing"
        case .yes: "true"
        case .no: "false"
        case .failed(let why): "failed:" + why.map { $0 == " " || $0 == "\n" ? "_" : $0 }
        }
    }

    init?(text: String) {
        switch text {
        case "started": self = .started
        case "nothing": self = .nothing
        case "true": self = .yes
        case "false": self = .no
        default:
            if text.hasPrefix("attached:"), let remaining = Int64(text.dropFirst("attached:".count)) {
                self = .attached(remaining: remaining)
            } else if text.hasPrefix("failed:") {
                self = .failed(String(text.dropFirst("failed:".count)))
            } else {
                return nil
            }
        }
    }

    var isFailure: Bool {
        if case .failed = self { true } else { false }
    }
}
