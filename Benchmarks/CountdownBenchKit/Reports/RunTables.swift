/// The run's tables, as rows of cells, shared by the text and Markdown reports: tick lateness
/// per start pattern, then cost, calls and wake-ups.
struct RunTables {
    let document: RunDocument

    struct Table {
        let title: String
        let columns: [String]
        var rows: [[String]] = []
        /// Where a new group (a new N) begins, for a blank line in text.
        var groupStarts: Set<Int> = []
    }

    var all: [Table] {
        document.options.starts.map(latency) + [cost, calls, wakeUps]
    }

    /// The floor measured alone, before each repeat: the machine's baseline.
    var floorLine: String {
        let f = document.floor.summary
        func ms(_ value: Double?) -> String { value.map(ReportFormat.milliseconds) ?? "—" }
        return "floor alone (one thread, clock_nanosleep to absolute deadlines every \(ReportFormat.significant(document.options.floorPeriodUs)) µs, "
            + "\(document.options.floorWakeUps) wake-ups before each repeat, n=\(ReportFormat.count(f.samples))): p50 \(ms(f.p50)), p90 \(ms(f.p90)), "
            + "p99 \(ms(f.p99)), p99.9 \(ms(f.p999)), max \(ms(f.max))"
    }

    /// The machine's memory, measured alone before each repeat.
    var memoryLine: String? {
        document.memory.flatMap(MemoryText.perRepeat).map {
            "memory alone (one dependent load at a time through a random cycle of \(MemoryProbe.lineBytes)-byte lines, before each repeat): \($0) a load"
        }
    }

    /// The rest of the machine over every configuration's window.
    var loadLine: String? {
        document.load.map { "the rest of the machine while configurations ran: \(LoadText.describe($0))" }
    }

    func latency(_ pattern: StartPattern) -> Table {
        let title = pattern == .spread
            ? "Tick lateness, starts spread evenly over one tick"
            : "Tick lateness, all starts at once (burst)"
        var table = Table(title: title, columns: [
            "backend", "N", "ticks", "p50", "p90", "p99 (repeats)", "p99.9", "max", "floor p99", "p99÷floor",
            "finish p99", "start delay p50", "CPU/event", "outcome",
        ])
        fill(&table, pattern: pattern) { c in
            [
                c[.tickP50].map { ReportFormat.count($0.samples) } ?? "0",
                cell(c, .tickP50), cell(c, .tickP90), cell(c, .tickP99) + range(c, .tickP99), cell(c, .tickP999),
                cell(c, .tickMax), c.windowFloor?.p99.map(ReportFormat.milliseconds) ?? "—", cell(c, .floorRatio),
                cell(c, .finishP99), cell(c, .startDelayP50), cell(c, .cpuPerEvent), OutcomeText.describe(c),
            ]
        }
        return table
    }

    var cost: Table {
        var table = Table(title: "Cost, starts spread (start and cancel timed with N countdowns active)", columns: [
            "backend", "N", "CPU (% of a core)", "CPU starting", "CPU steady", "CPU/event", "ctx switches", "busy threads",
            "pool wait p99", "RSS/countdown",
        ])
        fill(&table, pattern: .spread) { c in
            [
                cell(c, .cpu), cell(c, .cpuStartPhase), cell(c, .cpuSteady), cell(c, .cpuPerEvent), cell(c, .contextSwitches),
                cell(c, .threads), cell(c, .poolWait), cell(c, .rss),
            ]
        }
        return table
    }

    /// `start` and `cancel` with N active, beside a `Dictionary`'s insert and remove of the same
    /// keys in the same minute: the floor under any keyed call on this machine.
    var calls: Table {
        var table = Table(title: "start and cancel with N active (a Dictionary's insert and remove of the same keys in the same minute beside them)", columns: [
            "backend", "N", "calls", "start", "start p99", "floor", "÷ floor", "cancel", "cancel p99", "floor", "÷ floor",
        ])
        fill(&table, pattern: .spread) { c in
            [
                c[.startCall].map { ReportFormat.count($0.samples) } ?? "0",
                cell(c, .startCall), cell(c, .startCallP99), cell(c, .startFloor), cell(c, .startFloorRatio),
                cell(c, .cancelCall), cell(c, .cancelCallP99), cell(c, .cancelFloor), cell(c, .cancelFloorRatio),
            ]
        }
        return table
    }

    /// The scheduler's wake-ups beside the machine's own cost of one, measured in the same
    /// windows by the floor thread.
    var wakeUps: Table {
        var table = Table(title: "Wake-ups, starts spread, steady state (the scheduler's own; a floor thread's clock_nanosleep wake-up in the same windows beside it)", columns: [
            "backend", "N", "wake-ups/s", "events/wake-up", "CPU/wake-up", "floor CPU/wake-up", "÷ floor", "CPU/event",
        ])
        fill(&table, pattern: .spread) { c in
            let perWakeUp: String
            if let wakeUps = c[.wakeUps]?.value, wakeUps > 0, let cpu = c[.cpuPerWakeUp]?.value, let perEvent = c[.cpuPerEvent]?.value, perEvent > 0 {
                perWakeUp = ReportFormat.significant(cpu / perEvent)
            } else {
                perWakeUp = "—"
            }
            return [
                cell(c, .wakeUps), perWakeUp, cell(c, .cpuPerWakeUp), cell(c, .floorCPUPerWakeUp), cell(c, .wakeUpFloorRatio),
                cell(c, .cpuPerEvent),
            ]
        }
        return table
    }

    private func fill(_ table: inout Table, pattern: StartPattern, cells: (RunDocument.Configuration) -> [String]) {
        var lastCount: Int?
        for count in document.options.counts {
            for c in document.configurations where c.count == count && c.starts == pattern {
                if lastCount != count, lastCount != nil { table.groupStarts.insert(table.rows.count) }
                lastCount = count
                table.rows.append([c.backend, ReportFormat.count(c.count)] + cells(c))
            }
        }
    }

    func cell(_ c: RunDocument.Configuration, _ figure: Figure) -> String {
        ReportFormat.figure(figure, c[figure])
    }

    private func range(_ c: RunDocument.Configuration, _ figure: Figure) -> String {
        guard let s = c[figure]?.repeats, c[figure]?.isResolved == true else { return "" }
        return " (\(ReportFormat.value(s.min, figure.unit))–\(ReportFormat.value(s.max, figure.unit)))"
    }
}
