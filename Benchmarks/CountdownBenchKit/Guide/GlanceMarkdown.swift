/// The guide at a glance as the Markdown between the README's markers: the marks' rules, the
/// table (a mark and one figure a cell, with the file it came from), the charts the guide drew,
/// and a line for each Redis strategy. Every line knows what it writes, for `--check`.
struct GlanceMarkdown {
    let guide: Guide
    /// The results folder as a link from where the Markdown is read: `results` from the README.
    let linkBase: String
    /// The charts to embed, relative to the results folder.
    let charts: [GuideCharts.Chart]

    var lines: [GuideMarkdown.Line] {
        var out: [GuideMarkdown.Line] = []
        func prose(_ text: String) { out.append(.init(text: text, place: .prose)) }
        let numbered = guide.machines.count > 1
        let machines = guide.machines.enumerated().map { index, machine in
            "[`\(machine.folder)`](\(link("\(machine.folder)/README.md")))" + (numbered ? " (\(index + 1))" : "")
        }
        prose("Written by `countdown-bench guide` from `results/` (\(machines.joined(separator: ", ")); Linux figures); do not edit it by hand. "
            + "Each cell is a mark and one figure, linked to its file; each machine's README has the full cells. "
            + GlanceBuilder.questions.map { "*\($0.title)*: \($0.rule)" }.joined(separator: "; ") + ".")
        prose("")
        prose("|  | " + guide.columns.map { "`\($0)`" }.joined(separator: " | ") + " |")
        prose("| --- |" + String(repeating: " --- |", count: guide.columns.count))
        for row in guide.rows {
            let cells = row.cells.map(cell)
            out.append(.init(text: "| " + ([row.title] + cells).map(GuideMarkdown.escaped).joined(separator: " | ") + " |",
                             place: .tableRow(title: row.title, cells: cells)))
        }
        if !guide.fleetStatements.isEmpty {
            prose("")
            prose("A fleet of servers sharing its countdowns through Redis (the in-process backends above keep theirs in one process):")
            prose("")
            for statement in guide.fleetStatements {
                out.append(.init(text: "- \(statement.title): \(cell(statement.cell))", place: .statement(title: statement.title)))
            }
        }
        if !charts.isEmpty {
            prose("")
            prose(charts.map { "![\($0.title)](\(link($0.path)))" }.joined(separator: " "))
        }
        return out
    }

    var text: String { lines.map { $0.text + "\n" }.joined() }

    /// One machine's words with its link; over several, the range of the figure (or the first
    /// machine's words) and a link to each machine's file, labelled by the machine's number in
    /// the list above the table (its folder's name in every cell made a row of two machines
    /// longer than the glance's 1 200 characters).
    func cell(_ cell: Guide.Cell) -> String {
        let readings = cell.readings
        guard let first = readings.first else { return "not measured" }
        if readings.count == 1 { return "\(first.text) \(links(first, label: GuideMarkdown.label))" }
        let mark = first.text.split(separator: " ").first.map(String.init) ?? ""
        let words = GuideMarkdown.range(readings).map { "\(mark) \($0) over \(readings.count) machines" } ?? "\(first.text) (\(first.machine))"
        return words + " " + readings.map { reading in
            links(reading) { _ in guide.machines.firstIndex { $0.folder == reading.machine }.map { "\($0 + 1)" } ?? reading.machine }
        }.joined(separator: " ")
    }

    private func links(_ reading: Guide.Reading, label: (String) -> String) -> String {
        reading.files.map { "[\(label($0))](\(link($0)))" }.joined(separator: " ")
    }

    private func link(_ path: String) -> String { linkBase.isEmpty ? path : "\(linkBase)/\(path)" }
}
