import CountdownSupport
import Foundation

/// How figures are written in every report: three significant digits, the unit that keeps
/// them readable, "≥" for a lower bound.
enum ReportFormat {
    /// A figure kept in milliseconds, as ``DurationText`` writes durations.
    static func milliseconds(_ ms: Double) -> String { DurationText.nanoseconds(ms * 1e6) }

    /// A power of ten of milliseconds, for a chart's axis: 10 µs, 1 ms, 100 ms, 10 s.
    static func decade(milliseconds ms: Double) -> String {
        let (value, unit) = ms >= 1000 ? (ms / 1000, "s") : ms >= 1 ? (ms, "ms") : (ms * 1000, "µs")
        return String(format: "%g", value.rounded()) + " " + unit
    }

    static func percent(_ value: Double) -> String { significant(value) + " %" }

    static func bytes(_ value: Double) -> String {
        abs(value) >= 10_000 ? significant(value / 1024) + " KiB" : String(format: "%.0f B", value)
    }

    /// A figure in its unit; "≥ " in front when it is a lower bound.
    static func figure(_ figure: Figure, _ value: Double?, atLeast: Bool = false) -> String {
        guard let value else { return "—" }
        let bound = atLeast ? "≥ " : ""
        switch figure.unit {
        case "ms": return bound + milliseconds(value)
        case "%": return bound + percent(value)
        case "% of a core": return bound + significant(value) + " %"
        case "B": return bound + bytes(value)
        case "µs": return bound + significant(value) + " µs"
        case "×": return bound + significant(value) + "×"
        case "/s": return bound + count(Int(value.rounded())) + "/s"
        case "": return bound + count(Int(value.rounded()))
        default: return bound + significant(value)
        }
    }

    static func significant(_ value: Double) -> String { DurationText.significant(value) }

    static func count(_ n: Int) -> String {
        var digits = String(n)
        var grouped = ""
        while digits.count > 3 {
            grouped = "\u{2009}" + digits.suffix(3) + grouped
            digits.removeLast(3)
        }
        return digits + grouped
    }
}
