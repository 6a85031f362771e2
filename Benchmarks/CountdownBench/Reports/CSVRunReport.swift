/// One row per repeat of each configuration: every figure, the counts, the outcome.
struct CSVRunReport {
    let document: RunDocument

    func render() -> String {
        let countColumns = [
            "countdowns", "started", "finished", "not_started", "never_ticked", "ticks", "skipped_ticks",
            "early_events", "early_finishes", "doubled_finishes", "events_after_finish", "start_phase_ms", "window_ms", "hit_time_limit",
        ]
        var lines = [(["backend", "starts", "n", "repeat"] + Figure.all.map(\.name) + ["at_least"] + countColumns + ["outcome"])
            .map(quote).joined(separator: ",")]
        for c in document.configurations {
            for (index, r) in c.repeats.enumerated() {
                let k = r.counts
                let counts: [String] = [
                    "\(k.countdowns)", "\(k.started)", "\(k.finished)", "\(k.notStarted)", "\(k.neverTicked)", "\(k.ticks)",
                    "\(k.skippedTicks)", "\(k.earlyEvents)", "\(k.earlyFinishes)", "\(k.doubledFinishes)", "\(k.eventsAfterFinish)",
                    "\(k.startPhaseMs)", "\(k.windowMs)", "\(k.hitTimeLimit)",
                ]
                let row = [c.backend, c.starts.rawValue, "\(c.count)", "\(index + 1)"]
                    + Figure.all.map { r.figures[$0.name].map { "\($0)" } ?? "" }
                    + [r.atLeast.joined(separator: " ")] + counts + [r.outcome]
                lines.append(row.map(quote).joined(separator: ","))
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func quote(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
