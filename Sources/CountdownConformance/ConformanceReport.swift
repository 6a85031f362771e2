/// What one check concluded.
public struct CheckResult: Sendable, Hashable, Codable {
    /// What the check concluded.
    public enum Verdict: String, Sendable, Hashable, Codable {
        /// Everything observed kept the promise.
        case pass
        /// A promise was broken: ``CheckResult/messages`` says how, every time it was seen.
        case fail
        /// The check does not apply to this backend (it declares no capacity, say).
        case notApplicable = "n/a"
        /// What was observed fits neither outcome clearly (a figure in the band between them);
        /// not a failure, but not evidence either.
        case inconclusive
    }

    /// The time a check ran in.
    public enum TimeMode: String, Sendable, Hashable, Codable {
        /// Real clocks: the check slept and read the monotonic clock.
        case real
        /// The backend's own virtual clock (`VirtualTimeScheduling`): the check advanced it.
        case virtual
    }

    /// The check's id: `start`, `store.finish`, `profile.drift`, …
    public let id: String
    /// Whether the check judged the contract or the backend's declared profile.
    public let kind: ConformanceCheck.Kind
    /// What it concluded.
    public let verdict: Verdict
    /// The figure the check measured, with its unit: "finish error grows 0.4 µs per tick".
    public let figure: String?
    /// Every failure observed, in the order seen, or why the check did not apply.
    public let messages: [String]
    /// How long the check took, in seconds of real time.
    public let seconds: Double
    /// Whether it ran in real time or in the backend's virtual time.
    public let time: TimeMode

    init(id: String, kind: ConformanceCheck.Kind, verdict: Verdict, figure: String?, messages: [String], seconds: Double, time: TimeMode) {
        self.id = id
        self.kind = kind
        self.verdict = verdict
        self.figure = figure
        self.messages = messages
        self.seconds = seconds
        self.time = time
    }

    private enum CodingKeys: String, CodingKey { case id, kind, verdict, figure, messages, seconds, time }

    /// Reads a result from `decoder`; documents written before checks ran in virtual time are
    /// read as real-time results.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        kind = try c.decode(ConformanceCheck.Kind.self, forKey: .kind)
        verdict = try c.decode(Verdict.self, forKey: .verdict)
        figure = try c.decodeIfPresent(String.self, forKey: .figure)
        messages = try c.decode([String].self, forKey: .messages)
        seconds = try c.decode(Double.self, forKey: .seconds)
        time = try c.decodeIfPresent(TimeMode.self, forKey: .time) ?? .real
    }
}

/// Every check's result for one backend.
public struct ConformanceReport: Sendable, Codable, CustomStringConvertible {
    /// The backend's display name: `timestamp(wall)`.
    public let backend: String
    /// Every check's result, in the suite's order.
    public let results: [CheckResult]

    /// True when no check failed (pass, not applicable and inconclusive all count as not failed).
    public var passed: Bool { !results.contains { $0.verdict == .fail } }

    /// True when no *contract* check failed; profile mismatches are reported apart.
    public var meetsContract: Bool {
        !results.contains { $0.verdict == .fail && $0.kind == .contract }
    }

    /// The results that failed.
    public var failures: [CheckResult] { results.filter { $0.verdict == .fail } }

    /// One line per check, then the first messages of every failure (``CheckResult/shownMessages``).
    public var description: String {
        var lines = ["\(backend): \(passed ? "passed" : "FAILED")"]
        for r in results {
            let figure = (r.figure.map { " — \($0)" } ?? "") + (r.time == .virtual ? " [virtual time]" : "")
            lines.append("  \(r.verdict.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0))\(r.id)\(figure)")
            if r.verdict != .pass {
                lines += r.shownMessages.map { "      \($0)" }
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension CheckResult {
    /// How many of a check's messages a text report shows.
    public static let messagesShown = 5

    /// The first ``messagesShown`` messages, then how many more there are: a backend that broke
    /// a promise at each of 500 starts printed 500 lines. Every one stays in ``messages`` (and
    /// in a JSON report).
    public var shownMessages: [String] {
        guard messages.count > Self.messagesShown else { return messages }
        return Array(messages.prefix(Self.messagesShown)) + ["… and \(messages.count - Self.messagesShown) more (every one in the JSON report)"]
    }
}
