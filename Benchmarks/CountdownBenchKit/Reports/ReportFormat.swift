import CountdownSupport
import Foundation

/// How figures are written in every report: three significant digits, the unit that keeps
/// them readable, "≥" for a lower bound.
enum ReportFormat {
    /// A figure kept in milliseconds, as ``DurationText`` writes durations.
    static func milliseconds(_ ms: Double) -> String { DurationText.nanoseconds(ms * 1e6) }

    /// A power of ten of milliseconds, for a chart's axis: 10 µs, 1 ms, 100 ms, 10 s.
    static func decade(milliseconds ms: Double) -> String {
        // Below a microsecond in nanoseconds: a decade of 0.1 µs would round to "0 µs".
        let (value, unit) = ms >= 1000 ? (ms / 1000, "s") : ms >= 1 ? (ms, "ms") : ms >= 0.001 ? (ms * 1000, "µs") : (ms * 1_000_000, "ns")
        return String(format: "%g", value.rounded()) + " " + unit
    }

    static func percent(_ value: Double) -> String { significant(value) + " %" }

    static func bytes(_ value: Double) -> String {
        abs(value) >= 10_000 ? significant(value / 1024) + " KiB" : String(format: "%.0f B", value)
    }

    /// A value in `unit`; "≥ " in front when it is a lower bound.
    static func value(_ value: Double?, _ unit: FigureUnit, atLeast: Bool = false) -> String {
        guard let value else { return "—" }
        let bound = atLeast ? "≥ " : ""
        switch unit {
        case .milliseconds: return bound + milliseconds(value)
        case .percent, .percentOfCore: return bound + percent(value)
        case .bytes: return bound + bytes(value)
        case .microseconds: return bound + significant(value) + " µs"
        case .ratio: return bound + significant(value) + "×"
        case .perSecond: return bound + count(Int(value.rounded())) + "/s"
        case .count: return bound + count(Int(value.rounded()))
        }
    }

    /// A configuration's figure as every table shows it: the value, or, where its samples do
    /// not resolve it, "n=40" (the samples there were).
    static func figure(_ figure: Figure, _ measured: FigureValue?) -> String {
        guard let measured else { return "—" }
        guard measured.isResolved else { return "n=\(count(measured.samples))" }
        return value(measured.value, figure.unit, atLeast: measured.isLowerBound)
    }

    /// The unit as a column header or CSV/JSON label writes it.
    static func unitLabel(_ unit: FigureUnit) -> String {
        switch unit {
        case .microseconds: "µs"
        case .ratio: "×"
        default: unit.rawValue
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
