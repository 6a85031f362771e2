/// The run as Markdown: written as README.md beside the JSON, CSV and charts, so the folder
/// presents itself. Every sentence in it is computed from the run.
struct MarkdownRunReport {
    let document: RunDocument
    /// Other files in the output folder worth pointing at (conformance results, other runs).
    let neighbours: [String]

    func render() -> String {
        let d = document, tables = RunTables(document: d)
        var out = "# countdown-bench run\n\n"
        out += "Written by `countdown-bench \(d.arguments.joined(separator: " "))` on \(d.date). Do not edit: run it again.\n\n"
        out += "- Machine: \(d.machine.summary). These are **Linux** figures (corelibs Foundation, libdispatch).\n"
        out += "- Each countdown lasts \(ReportFormat.milliseconds(d.options.durationMs)) and ticks every \(ReportFormat.milliseconds(d.options.tickMs)), under \(d.options.keyShape.description); "
        out += "N countdowns run at once, in rounds where N alone gives fewer than \(ReportFormat.count(d.options.minimumTickSamples)) ticks over the repeats; "
        out += "\(d.options.repeats) repeat(s). Percentiles pool every repeat's samples; where the samples do not resolve one (a p99 needs 100, a p99.9 1 000) the table shows n=… instead. "
        out += "Other figures are the median of the repeats; the repeats' p99s are in brackets, and a configuration whose repeats disagree more than 2× on p99 is marked NOISY. One whose window floor p99 exceeded \(ReportFormat.significant(ConfigurationSummary.disturbedRatio))× the floor alone in some repeat is marked DISTURBED: the machine itself was late then. Both say what the floor in each window and the steal time were.\n"
        out += "- Lateness = when the observer ran − start + k·T (the `start` call's own timestamp); finish error likewise against start + D.\n"
        out += "- A configuration is cut off \(ReportFormat.milliseconds(d.options.graceMs)) after its last countdown should have finished; what had not happened by then counts as late by at least the time it had waited, shown **≥**.\n"
        out += "- \(tables.floorLine). The same thread also runs through every configuration's window: **floor p99** in the tables is that one, so **p99÷floor** compares the same minutes.\n"
        if let memory = tables.memoryLine {
            out += "- \(memory.prefix(1).uppercased() + memory.dropFirst()). A cold start or cancel at a million keys is a few such loads; a neighbour that thrashes the host's shared cache shows here, not in steal time.\n"
        }
        if let load = tables.loadLine { out += "- \(load.prefix(1).uppercased() + load.dropFirst()) (from /proc/stat; a configuration with steal ≥ \(ReportFormat.percent(MachineLoad.busySteal)) or other processes ≥ \(ReportFormat.percent(MachineLoad.busyOthers)) is marked BUSY MACHINE).\n" }
        out += "\n"

        out += "## What keeps up\n\n"
        out += "The largest N at which each backend, with starts spread over a tick, delivered 99 % of its ticks within one 60 Hz frame (\(ReportFormat.milliseconds(KeepsUp.frameMs))) of their ideal time and finished every countdown within the limit:\n\n"
        out += markdownTable(columns: ["backend", "keeps up to N", "p99 there", "CPU there", "next N", "what happened there"], rows: keepsUp())
        out += "\n## Charts\n\n"
        for (file, _) in RunCharts(document: d).files { out += "![\(file)](\(file))\n\n" }
        for table in tables.all {
            out += "## \(table.title)\n\n" + markdownTable(columns: table.columns, rows: table.rows) + "\n"
        }
        out += "## Figures\n\n"
        out += "- **ticks**: the tick samples behind the percentiles, every round and repeat; **p50 … max**: tick lateness percentiles over them; **floor p99**: the floor thread's p99 in the same windows; **p99÷floor**: the one over the other (below 1× when the process was so busy that its threads were awake when a timer came due, while the floor sleeps between wake-ups).\n"
        out += "- **start delay**: lateness of each countdown's first tick after its start (the operation-queue worker waiting for a pool thread shows here); **started > 1 tick late** in run.csv.\n"
        out += "- **CPU**: user + system time of the whole process (getrusage) over the configuration's window, less the benchmark's floor and sampler threads' own, as % of one core; **CPU starting**: the same while the N `start` calls were made (the starter's pacing included); **CPU steady**: from the last start to the last finish, counting down alone; **CPU/event**: steady CPU over the events delivered in it, in µs (the figure that carries between machines and to a phone's battery); **ctx switches** per second, whole window.\n"
        out += "- **busy threads**: threads that used at least 0.1 ms of CPU while it ran (/proc/self/task/*/schedstat), the benchmark's own included (starter, sampler, floor thread, delivery queue; and libdispatch's pool threads that ran the delivery queue's blocks, which an earlier operation-queue configuration left many of); **pool wait p99**: how long a block waited for libdispatch's global pool (probed every 10 ms).\n"
        out += "- **RSS/countdown**, **start**, **cancel**: a separate scheduler filled to N countdowns whose ticks are far off; then up to \(d.options.churnSamples) keys cancelled and started again, each call timed; RSS from /proc before and after the fill. **floor**: once that scheduler is shut down, the same keys in the same order put into a Swift `Dictionary` reserved for N (each insert allocating an entry, as a start allocates its observer's), then removed and inserted again, each timed: the least a keyed call does (find the key, store or drop an entry), done by Swift's own hash table, in the same minute.\n\n"
        out += "## Files\n\n"
        out += "- `run.json`: every figure with its samples, of every configuration and repeat, the pooled lateness histograms (sparse), the machine and options (format `\(d.format)`, version \(d.version)); `countdown-bench compare OLD.json NEW.json` reads it.\n"
        out += "- `run.csv`: one row per figure, pooled and per repeat.\n"
        out += "- `hgrm/`: each configuration's tick lateness as an HdrHistogram percentile distribution (ms); `benchmark-action.json`: the headline figures for github-action-benchmark (`customSmallerIsBetter`).\n"
        out += "- `lateness-*.svg`, `cpu.svg`, `cpu-per-event.svg`: the charts above.\n"
        for neighbour in neighbours { out += "- \(neighbour)\n" }
        return out
    }

    private func keepsUp() -> [[String]] {
        let tables = RunTables(document: document)
        return document.options.backends.map { backend in
            let found = KeepsUp(backend, in: document)
            let best = found?.best, next = found?.next
            return [
                backend, best.map { ReportFormat.count($0.count) } ?? "none",
                best.map { tables.cell($0, .tickP99) } ?? "—", best.map { tables.cell($0, .cpu) } ?? "—",
                next.map { ReportFormat.count($0.count) } ?? "—",
                next.map { "p99 \(tables.cell($0, .tickP99)), CPU \(tables.cell($0, .cpu)); \(OutcomeText.describe($0))" } ?? "(largest N measured)",
            ]
        }
    }

    private func markdownTable(columns: [String], rows: [[String]]) -> String {
        func line(_ cells: [String]) -> String {
            "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |\n"
        }
        return line(columns) + line(columns.map { _ in "---" }) + rows.map(line).joined()
    }
}
