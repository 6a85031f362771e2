import Countdown

/// What a `countdown-bench worker` tells its parent, one line each on stdout, and what the
/// parent tells it on stdin: both ends encode and decode through these types. NS is
/// CLOCK_MONOTONIC, which keeps counting while the worker is stopped, so the parent's and the
/// worker's instants compare directly.
enum WorkerMessage: Equatable, Sendable {
    /// The scheduler is made; starts follow.
    case ready
    /// `start INDEX NS`: countdown INDEX is about to be started.
    case started(index: Int, at: UInt64)
    /// `event INDEX tick|finished REMAINING_NS NS`.
    case event(index: Int, kind: CountdownEvent.Kind, remaining: Int64, at: UInt64)
    /// `paused NS`, `resumed NS`: every key was paused or resumed.
    case paused(at: UInt64)
    case resumed(at: UInt64)
    /// Every countdown finished.
    case done
    /// `unknown TEXT`: an instruction the worker did not understand.
    case unknown(String)

    var line: String {
        switch self {
        case .ready: "ready"
        case let .started(index, at): "start \(index) \(at)"
        case let .event(index, kind, remaining, at): "event \(index) \(kind.rawValue) \(remaining) \(at)"
        case let .paused(at): "paused \(at)"
        case let .resumed(at): "resumed \(at)"
        case .done: "done"
        case let .unknown(text): "unknown \(text)"
        }
    }

    /// The message a line encodes; nil for a line no worker writes.
    init?(line: some StringProtocol) {
        let words = line.split(separator: " ")
        switch (words.first, words.count) {
        case ("ready"?, 1): self = .ready
        case ("done"?, 1): self = .done
        case ("start"?, 3):
            guard let index = Int(words[1]), let at = UInt64(words[2]) else { return nil }
            self = .started(index: index, at: at)
        case ("event"?, 5):
            guard let index = Int(words[1]), let kind = CountdownEvent.Kind(rawValue: String(words[2])),
                  let remaining = Int64(words[3]), let at = UInt64(words[4]) else { return nil }
            self = .event(index: index, kind: kind, remaining: remaining, at: at)
        case ("paused"?, 2):
            guard let at = UInt64(words[1]) else { return nil }
            self = .paused(at: at)
        case ("resumed"?, 2):
            guard let at = UInt64(words[1]) else { return nil }
            self = .resumed(at: at)
        case ("unknown"?, _):
            self = .unknown(String(line.dropFirst("unknown ".count)))
        default:
            return nil
        }
    }

    /// The same kind of message, whatever its values: what the parent waits for.
    enum Kind: Sendable { case ready, started, event, paused, resumed, done, unknown }

    var kind: Kind {
        switch self {
        case .ready: .ready
        case .started: .started
        case .event: .event
        case .paused: .paused
        case .resumed: .resumed
        case .done: .done
        case .unknown: .unknown
        }
    }
}

/// What the parent tells a worker, one line each on its stdin.
enum WorkerInstruction: String, Sendable {
    /// Pause every key.
    case pause
    /// Resume every key.
    case resume
    /// Exit at once.
    case quit
}
