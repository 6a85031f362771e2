/// What one check concluded.
public struct CheckResult: Sendable, Hashable, Codable {
    public enum Verdict: String, Sendable, Hashable, Codable {
        case pass
        case fail
        /// The check does not apply to this backend (it declares no capacity, say).
        case notApplicable = "n/a"
        /// What was observed fits neither outcome clearly (a figure in the band between them);
        /// not a failure, but not evidence either.
        case inconclusive
    }

    public let id: String
    public let kind: ConformanceCheck.Kind
    public let verdict: Verdict
    /// The figure the check measured, with its unit: "finish error grows 0.4 µs per tick".
    public let figure: String?
    /// Every failure observed, in the order seen, or why the check did not apply.
    public let messages: [String]
    /// How long the check took, in seconds.
    public let seconds: Double
}

/// Every check's result for one backend.
public struct ConformanceReport: Sendable, Codable, CustomStringConvertible {
    /// The backend's display name: `timestamp(wall)`.
    public let backend: String
    public let results: [CheckResult]

    /// True when no check failed (pass, not applicable and inconclusive all count as not failed).
    public var passed: Bool { !results.contains { $0.verdict == .fail } }

    /// True when no *contract* check failed; profile mismatches are reported apart.
    public var meetsContract: Bool {
        !results.contains { $0.verdict == .fail && $0.kind == .contract }
    }

    public var failures: [CheckResult] { results.filter { $0.verdict == .fail } }

    /// One line per check, then the messages of every failure.
    public var description: String {
        var lines = ["\(backend): \(passed ? "passed" : "FAILED")"]
        for r in results {
            let figure = r.figure.map { " — \($0)" } ?? ""
            lines.append("  \(r.verdict.rawValue.padding(toLength: 12, withPad: " ", startingAt: 0))\(r.id)\(figure)")
            if r.verdict != .pass {
                lines += r.messages.map { "      \($0)" }
            }
        }
        return lines.joined(separator: "\n")
    }
}
