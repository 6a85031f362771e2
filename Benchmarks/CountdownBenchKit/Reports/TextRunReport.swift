/// The run as plain text tables, for stdout: bold headers on a terminal, nothing else.
struct TextRunReport {
    let document: RunDocument
    let isTerminal: Bool

    func render() -> String {
        let tables = RunTables(document: document)
        var out = "countdown-bench run — \(document.machine.summary)\n"
        out += "tick \(ReportFormat.milliseconds(document.options.tickMs)), duration \(ReportFormat.milliseconds(document.options.durationMs)), \(document.options.keyShape.description), "
        out += "\(document.options.repeats) repeat(s), at least \(ReportFormat.count(document.options.minimumTickSamples)) ticks a configuration: "
        out += "percentiles pool every repeat's samples (n=… where too few resolve one); ≥ marks a lower bound (cut off by the time limit)\n"
        out += tables.floorLine + "\n"
        if let memory = tables.memoryLine { out += memory + "\n" }
        if let load = tables.loadLine { out += load + "\n" }
        for table in tables.all {
            out += "\n" + (isTerminal ? "\u{1B}[1m\(table.title)\u{1B}[0m" : table.title) + "\n"
            var text = TextTable(columns: table.columns)
            for row in table.rows { text.add(row) }
            let lines = text.render().split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() where !(index == lines.count - 1 && line.isEmpty) {
                if table.groupStarts.contains(index - 2) { out += "\n" }
                out += line + "\n"
            }
        }
        return out
    }
}
