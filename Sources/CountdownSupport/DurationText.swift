import Foundation

/// The package's one way of writing a duration for people: three significant digits in the
/// unit that keeps it readable ("1.50 s", "250 ms", "40.1 µs", "800 ns"), whole days and hours
/// as such ("30 d", "2 h"), and a whole number without decimals ("10 ms").
public enum DurationText {
    /// `nanoseconds` written in its unit; negative values keep their sign.
    public static func nanoseconds(_ nanoseconds: Double) -> String {
        let magnitude = abs(nanoseconds)
        let second = 1e9, hour = 3600 * second, day = 24 * hour
        if magnitude >= day, magnitude.truncatingRemainder(dividingBy: day) == 0 {
            return significant(nanoseconds / day) + " d"
        }
        if magnitude >= hour, magnitude.truncatingRemainder(dividingBy: hour) == 0 {
            return significant(nanoseconds / hour) + " h"
        }
        if magnitude >= second || magnitude == 0 { return significant(nanoseconds / second) + " s" }
        if magnitude >= 1e6 { return significant(nanoseconds / 1e6) + " ms" }
        if magnitude >= 1e3 { return significant(nanoseconds / 1e3) + " µs" }
        return significant(nanoseconds) + " ns"
    }

    /// Three significant digits, no exponent, no decimals on a whole number: 0.0712, 1.23, 12.3,
    /// 123, 12300, 10.
    public static func significant(_ value: Double) -> String {
        let magnitude = abs(value)
        if magnitude == 0 { return "0" }
        if magnitude >= 100 || (magnitude >= 1 && value == value.rounded()) { return String(format: "%.0f", value) }
        if magnitude >= 10 { return String(format: "%.1f", value) }
        if magnitude >= 1 { return String(format: "%.2f", value) }
        let decimals = min(6, 2 - Int(floor(log10(magnitude))))
        return String(format: "%.\(decimals)f", value)
    }
}

extension Duration {
    /// This duration as ``DurationText`` writes it: "1.50 s", "250 ms", "30 d".
    public var text: String { DurationText.nanoseconds(Double(nanoseconds)) }
}
