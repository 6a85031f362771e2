/// The run as tidy CSV: one row per figure of each configuration, pooled over the repeats
/// (`repeat` = `all`, with its samples) and then for each repeat on its own.
struct CSVRunReport {
    let document: RunDocument

    static let header = [
        "backend", "starts", "n", "rounds", "repeat", "figure", "unit", "value", "samples", "lower_bound",
        "resolved", "noisy", "disturbed", "busy_machine", "steal_percent", "outcome",
    ]

    func render() -> String {
        var lines = [Self.header.joined(separator: ",")]
        for c in document.configurations {
            let head = [c.backend, c.starts.rawValue, "\(c.count)", "\(c.rounds)"]
            let flags = ["\(c.isNoisy)", "\(c.isDisturbed)", "\(c.load?.isBusy ?? false)", c.load.map { "\($0.stealPercent)" } ?? ""]
            for figure in Figure.allCases {
                guard let v = c[figure] else { continue }
                lines.append(row(head + [
                    "all", figure.name, ReportFormat.unitLabel(figure.unit), "\(v.value)", "\(v.samples)", "\(v.isLowerBound)",
                    "\(v.isResolved)",
                ] + flags + [OutcomeText.describe(c.outcome)]))
            }
            for (index, r) in c.repeats.enumerated() {
                let repeatFlags = ["", "", "\(r.load?.isBusy ?? false)", r.load.map { "\($0.stealPercent)" } ?? ""]
                for figure in Figure.allCases {
                    guard let value = r.figures[figure] else { continue }
                    lines.append(row(head + [
                        "\(index + 1)", figure.name, ReportFormat.unitLabel(figure.unit), "\(value)", "",
                        "\(r.lowerBounds.contains(figure))", "",
                    ] + repeatFlags + [OutcomeText.describe(r.outcome)]))
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func row(_ fields: [String]) -> String { fields.map(quote).joined(separator: ",") }

    private func quote(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
