import CountdownSupport
import Countdown

/// Rules every observer's event list obeys, whatever happened around it.
enum EventRules {
    /// Ticks positive and never increasing, at most one finish (with zero), nothing after it:
    /// each breach, as a check reports it.
    static func wellFormed(_ records: [Recorder.Record], _ label: String, in c: CheckContext) {
        for violation in violations(of: records, label) { c.fail(violation) }
    }

    /// The same rules as a value: every breach in `records`, in order, in words. The suite's
    /// checks and the package's own tests judge by this one function.
    static func violations(of records: [Recorder.Record], _ label: String) -> [String] {
        var found: [String] = []
        var previous: Duration?
        var finished = false
        for record in records {
            if finished { found.append("\(label): \(describe(record.event)) after the finish") }
            switch record.event.kind {
            case .tick:
                if record.event.remaining <= .zero { found.append("\(label): a tick carries \(record.event.remaining)") }
                if let previous, record.event.remaining > previous {
                    found.append("\(label): remaining rose from \(previous) to \(record.event.remaining)")
                }
                previous = record.event.remaining
            case .finished:
                if record.event.remaining != .zero { found.append("\(label): the finish carries \(record.event.remaining)") }
                finished = true
            }
        }
        return found
    }

    /// A tick saying `r` remains must not begin before start + (duration − r): it would tell
    /// the observer less time is left than really is.
    static func neverEarly(_ ticks: [Recorder.Record], duration: Duration, start: UInt64,
                           _ label: String, in c: CheckContext) {
        for record in ticks where record.event.kind == .tick {
            let due = start + nanoseconds(duration - record.event.remaining)
            c.expect(record.at + c.granularity >= due,
                     "\(label): a tick carrying \(record.event.remaining) came \(DurationText.nanoseconds(Double(due - record.at))) early")
        }
    }

    static func describe(_ event: CountdownEvent) -> String {
        "\(event.kind.rawValue)(\(event.remaining))"
    }
}

/// A key as a failure message shows it: short printable ASCII as it is, anything else with
/// its non-ASCII scalars escaped and, when long, cut in the middle with its length in bytes.
enum KeyText {
    static func describe(_ key: String) -> String {
        let scalars = key.unicodeScalars.map { scalar -> String in
            (0x20..<0x7f).contains(scalar.value) ? String(scalar) : "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        }
        guard scalars.count > 48 else { return "\"\(scalars.joined())\"" }
        return "\"\(scalars.prefix(12).joined())…\(scalars.suffix(12).joined())\" (\(key.utf8.count) bytes)"
    }
}
