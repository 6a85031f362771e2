import Countdown

/// Everything the members of a fleet trial did and heard, with the instants they took
/// (`CLOCK_MONOTONIC`, one clock for every process on the machine): what the judge reads.
public struct FleetHistory: Sendable {
    /// One call a member made.
    public struct Call: Sendable {
        public enum Operation: String, Sendable, CaseIterable {
            case start, attach, cancel, pause, resume
        }

        public enum Answer: Sendable, Equatable {
            case started
            case attached(remaining: Int64)
            /// An attach that found nothing.
            case nothing
            case yes
            case no
            /// The call threw: what it did is unknown.
            case failed(String)
        }

        /// Unique in the trial; a start's or attach's observer has the same id.
        public let id: Int
        public let member: Int
        public let key: String
        public let operation: Operation
        /// Nanoseconds; for a start.
        public let duration: Int64
        /// Whether the trial made it after the race, to end what was left (a paused countdown).
        public let isCleanup: Bool
        public var invoked: UInt64?
        /// Nil while it has not returned (its member was killed, or it hangs).
        public var returned: UInt64?
        public var answer: Answer?
    }

    /// One event an observer heard.
    public struct Event: Sendable {
        public let observer: Int
        public let kind: CountdownEvent.Kind
        public let remaining: Int64
        public let at: UInt64
    }

    public var calls: [Int: Call] = [:]
    public var events: [Int: [Event]] = [:]
    /// The instant each killed member was killed.
    public var killed: [Int: UInt64] = [:]
    /// Observers each member still held at its census, by their calls' ids (-1: it gave none).
    public var held: [Int: [Int]] = [:]

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
