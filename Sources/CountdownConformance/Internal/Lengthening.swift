import CountdownSupport

/// A premise the machine's speed can break: a countdown must still run when another
/// scheduler's call about it returns. A check judges an attempt only when the premise held,
/// by the timestamps; else it tries again with a countdown ``factor`` times as long, at most
/// ``tries`` times, and is inconclusive after (a loaded machine, not the backend).
/// (`fleet.one-key` lengthens its own way: its rounds are judged either way.)
struct Lengthening {
    static let tries = 3, factor = 4

    let initial: Duration
    /// What the other scheduler's call was, for the messages: "cancel", "start".
    let call: String

    /// Runs `attempt` (the countdown's length, the attempt's number) until it judges (non-nil).
    /// Nil after ``tries``, the check marked inconclusive; a figure saying so when lengthened.
    func run<T>(_ c: CheckContext, _ part: String, _ attempt: (Duration, Int) throws -> T?) rethrows -> (judged: T, lengthened: String?)? {
        var duration = initial
        for number in 0..<Self.tries {
            if let judged = try attempt(duration, number) {
                let note = duration > initial
                    ? "\(part): countdown lengthened to \(Self.text(duration)), the \(call) having come after a shorter one's deadline" : nil
                return (judged, note)
            }
            duration *= Self.factor
        }
        c.inconclusive("\(part): in \(Self.tries) tries the other scheduler's \(call) came after the countdown's deadline (the last \(Self.text(duration / Self.factor))): a loaded machine")
        return nil
    }

    static func text(_ duration: Duration) -> String { DurationText.nanoseconds(Double(nanoseconds(duration))) }
}
