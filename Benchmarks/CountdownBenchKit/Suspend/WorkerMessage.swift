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
    /// `background NS`, `foreground NS`: the scheduler was told the app went to the background,
    /// or came back.
    case background(at: UInt64)
    case foreground(at: UInt64)
    /// `restored INDEX REMAINING_NS NS`: a relaunched worker restored countdown INDEX from its
    /// store, with this much left, and attached to it.
    case restored(index: Int, remaining: Int64, at: UInt64)
    /// `expired INDEX NS`: its deadline passed while no worker ran; the restore reported it.
    case expired(index: Int, at: UInt64)
    /// `writing NS`: the store is half-way through writing its file (with `--write-pause`).
    case writing(at: UInt64)
    /// `wrote DURATION_NS`: the store wrote its file; it took this long (a pause left out).
    case wrote(nanoseconds: Int64)
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
        case let .background(at): "background \(at)"
        case let .foreground(at): "foreground \(at)"
        case let .restored(index, remaining, at): "restored \(index) \(remaining) \(at)"
        case let .expired(index, at): "expired \(index) \(at)"
        case let .writing(at): "writing \(at)"
        case let .wrote(nanoseconds): "wrote \(nanoseconds)"
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
        case ("background"?, 2):
            guard let at = UInt64(words[1]) else { return nil }
            self = .background(at: at)
        case ("foreground"?, 2):
            guard let at = UInt64(words[1]) else { return nil }
            self = .foreground(at: at)
        case ("writing"?, 2):
            guard let at = UInt64(words[1]) else { return nil }
            self = .writing(at: at)
        case ("wrote"?, 2):
            guard let nanoseconds = Int64(words[1]) else { return nil }
            self = .wrote(nanoseconds: nanoseconds)
        case ("restored"?, 4):
            guard let index = Int(words[1]), let remaining = Int64(words[2]), let at = UInt64(words[3]) else { return nil }
            self = .restored(index: index, remaining: remaining, at: at)
        case ("expired"?, 3):
            guard let index = Int(words[1]), let at = UInt64(words[2]) else { return nil }
            self = .expired(index: index, at: at)
        case ("unknown"?, _):
            self = .unknown(String(line.dropFirst("unknown ".count)))
        default:
            return nil
        }
    }

    /// The same kind of message, whatever its values: what the parent waits for.
    enum Kind: Sendable { case ready, started, event, paused, resumed, background, foreground, restored, expired, writing, wrote, done, unknown }

    var kind: Kind {
        switch self {
        case .ready: .ready
        case .started: .started
        case .event: .event
        case .paused: .paused
        case .resumed: .resumed
        case .background: .background
        case .foreground: .foreground
        case .restored: .restored
        case .expired: .expired
        case .writing: .writing
        case .wrote: .wrote
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
    /// Tell the scheduler the app went to the background (`enteredBackground()`).
    case background
    /// Tell the scheduler the app came back (`enteredForeground()`).
    case foreground
    /// Start and cancel a countdown of its own: two writes of the store.
    case churn
    /// Exit at once.
    case quit
}
