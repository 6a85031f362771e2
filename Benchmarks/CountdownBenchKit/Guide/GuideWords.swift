/// How the guide words a figure, a range, a ratio and an outcome.
extension GuideBuilder {
    /// A figure as the run's tables write it ("—" when the file has none), but a call's time
    /// in the unit that keeps it short: "430 ns", "5.21 ms".
    static func figure(_ c: RunDocument.Configuration, _ figure: Figure) -> String {
        guard figure.unit == .microseconds, figure != .cpuPerEvent, let v = c[figure], v.isResolved else {
            return ReportFormat.figure(figure, c[figure])
        }
        return (v.isLowerBound ? "≥ " : "") + ReportFormat.milliseconds(v.value / 1000)
    }

    /// A percentile with its repeats' range and its samples: "95.7 µs (repeats 79.4 µs–105 µs;
    /// 297 000 ticks)".
    static func percentile(_ c: RunDocument.Configuration, _ figure: Figure) -> String {
        guard let v = c[figure] else { return "—" }
        var text = ReportFormat.figure(figure, v)
        var notes: [String] = []
        if v.isResolved, let r = v.repeats, r.min != r.max {
            notes.append("repeats \(ReportFormat.value(r.min, figure.unit))–\(ReportFormat.value(r.max, figure.unit))")
        }
        notes.append("\(ReportFormat.count(v.samples)) \(figure == .tickP99 || figure == .tickP50 ? "ticks" : "samples")")
        text += " (" + notes.joined(separator: "; ") + ")"
        return text
    }

    /// The figure for a range over machines; nil when it is a lower bound or unresolved.
    static func magnitude(_ c: RunDocument.Configuration, _ figure: Figure) -> Guide.Magnitude? {
        guard let v = c[figure], v.isResolved, !v.isLowerBound else { return nil }
        return .init(value: v.value, unit: figure.unit)
    }

    /// What became of a configuration's countdowns, in words, with every breach of the
    /// contract.
    static func outcome(_ c: RunDocument.Configuration) -> String {
        var text: String
        if let cut = c.outcome.cutOff {
            let worst = c.repeats.count > 1 ? " (the worst of \(c.repeats.count) repeats)" : ""
            text = "cut off at its \(ReportFormat.milliseconds(cut.limitMs)) limit\(worst): \(ReportFormat.count(cut.finished)) of \(ReportFormat.count(cut.countdowns)) finished"
            if cut.notStarted > 0 {
                text += ", \(ReportFormat.count(cut.notStarted)) never started (the starts took \(ReportFormat.milliseconds(cut.startPhaseMs)))"
            }
        } else {
            let repeats = c.repeats.count > 1 ? ", in each of \(c.repeats.count) repeats" : ""
            text = "all \(ReportFormat.count(c.count)) finished\(repeats)"
        }
        return text + rest(c, skipped: true)
    }

    /// Nothing for a configuration that completed without skipping or a breach; else what
    /// happened (its whole outcome when it was cut off).
    static func unlessComplete(_ c: RunDocument.Configuration, skipped: Bool = true) -> String {
        c.outcome.cutOff != nil ? "; " + outcome(c) : rest(c, skipped: skipped)
    }

    /// The skipped ticks and the breaches, each after "; ".
    static func rest(_ c: RunDocument.Configuration, skipped: Bool) -> String {
        let skips = skipped && c.outcome.skippedTicks > 0 ? ["\(ReportFormat.count(c.outcome.skippedTicks)) ticks skipped to catch up"] : []
        return (skips + OutcomeText.breaches(c.outcome)).map { "; " + $0 }.joined()
    }

    static func losses(lost: Int, doubled: Int, asDeclared: Bool) -> [String] {
        var parts: [String] = []
        if lost > 0 { parts.append("\(lost) finish(es) LOST") }
        if doubled > 0 { parts.append("\(doubled) finish(es) DOUBLED") }
        if !asDeclared { parts.append("NOT as declared") }
        return parts
    }

    /// "finished 400 ms after its deadline", "finished 1.40 s early", over every key.
    static func finished(_ errorsMs: [Double], against deadline: String) -> String {
        guard let low = errorsMs.min(), let high = errorsMs.max() else { return "no finish" }
        if high < 0 { return "finished \(range(-high, -low)) before \(deadline)" }
        if low < 0 { return "finished from \(ReportFormat.milliseconds(-low)) before to \(ReportFormat.milliseconds(high)) after \(deadline)" }
        return "finished \(range(low, high)) after \(deadline)"
    }

    /// One figure when the two are within a millisecond, else "low–high".
    static func range(_ low: Double, _ high: Double) -> String {
        abs(high - low) < 1 || ReportFormat.milliseconds(low) == ReportFormat.milliseconds(high)
            ? ReportFormat.milliseconds(high)
            : "\(ReportFormat.milliseconds(low))–\(ReportFormat.milliseconds(high))"
    }

    /// "3.65×", "2.65× less"; "the same" when the two round to each other.
    static func ratio(_ a: Double, _ b: Double) -> String {
        let up = ReportFormat.significant(a / b), down = ReportFormat.significant(b / a)
        if up == "1.00" || down == "1.00" { return "the same" }
        return a >= b ? "\(up)×" : "\(down)× less"
    }
}
