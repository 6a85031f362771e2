import CountdownSupport
import Countdown

/// Rules every observer's event list obeys, whatever happened around it.
enum EventRules {
    /// Ticks positive and never increasing, at most one finish (with zero), nothing after it.
    static func wellFormed(_ records: [Recorder.Record], _ label: String, in c: CheckContext) {
        var previous: Duration?
        var finished = false
        for record in records {
            c.expect(!finished, "\(label): \(describe(record.event)) after the finish")
            switch record.event.kind {
            case .tick:
                c.expect(record.event.remaining > .zero, "\(label): a tick carries \(record.event.remaining)")
                if let previous {
                    c.expect(record.event.remaining <= previous,
                             "\(label): remaining rose from \(previous) to \(record.event.remaining)")
                }
                previous = record.event.remaining
            case .finished:
                c.expect(record.event.remaining == .zero, "\(label): the finish carries \(record.event.remaining)")
                finished = true
            }
        }
    }

    /// A tick saying `r` remains must not begin before start + (duration − r): it would tell
    /// the observer less time is left than really is.
    static func neverEarly(_ ticks: [Recorder.Record], duration: Duration, start: UInt64,
                           _ label: String, in c: CheckContext) {
        for record in ticks where record.event.kind == .tick {
            let due = start + nanoseconds(duration - record.event.remaining)
            c.expect(record.at + granularity >= due,
                     "\(label): a tick carrying \(record.event.remaining) came \(DurationText.nanoseconds(Double(due - record.at))) early")
        }
    }

    static func describe(_ event: CountdownEvent) -> String {
        "\(event.kind.rawValue)(\(event.remaining))"
    }
}
