/// The README's guide at a glance: the questions a chooser asks, each answered per backend by a
/// mark and one figure, from the same files as the full guide (``GuideBuilder``), which each
/// machine's README carries. A mark is decided from the figure, by the rule the row states:
/// nothing here is typed by hand but the questions and their rules.
struct GlanceBuilder {
    let library: ResultsLibrary

    enum Mark: String, Sendable {
        case good = "✅"
        case costly = "⚠️"
        case fails = "❌"
    }

    /// One question and the rule its marks follow, as the README states it.
    struct Question {
        let title: String
        let rule: String
    }

    static let freeze = Question(title: "keeps its deadline through a 650 ms freeze (SIGSTOP)", rule: "✅ finished within 100 ms of the deadline")
    static let clock = Question(title: "moved by the wall clock set forward", rule: "✅ not moved")
    static let tenThousand = Question(title: "keeps up at N = 10 000, 10 ms ticks", rule: "✅ every countdown finished, p99 within a 60 Hz frame")
    static let million = Question(title: "keeps up at N = 1 000 000, 1 s ticks", rule: "the same")
    static let cpu = Question(title: "CPU per event, N = 100 000, 1 s ticks", rule: "✅ within 2× the least, ⚠️ within 5×, ❌ beyond")
    static let memory = Question(title: "memory per countdown, 1 000 000 active", rule: "the same")
    static let questions = [freeze, clock, tenThousand, million, cpu, memory]

    func build() -> Guide {
        let rows = [
            row(Self.freeze) { m, b in freeze(m, b) },
            row(Self.clock) { m, b in clockJump(m, b) },
            row(Self.tenThousand) { m, b in tenThousand(m, b) },
            row(Self.million) { m, b in million(m, b) },
            relative(Self.cpu, .cpuPerEvent) { m, b in tickSecond(m, b, 100_000) },
            relative(Self.memory, .rss) { m, b in tickSecond(m, b, 1_000_000) },
        ]
        var guide = Guide(machines: full.machineEntries, columns: GuideBuilder.columns, rows: rows, statements: [])
        guide.fleetStatements = fleet
        return guide
    }

    // MARK: - Rows

    private func row(_ q: Question, _ answer: (MachineResults, String) -> Guide.Reading?) -> Guide.Row {
        Guide.Row(title: q.title, cells: GuideBuilder.columns.map { backend in
            Guide.Cell(readings: library.machines.compactMap { answer($0, backend) })
        })
    }

    /// A figure where less is better, marked against the least in its row on the same machine.
    private func relative(_ q: Question, _ figure: Figure, _ find: (MachineResults, String) -> GuideBuilder.Found?) -> Guide.Row {
        Guide.Row(title: q.title, cells: GuideBuilder.columns.map { backend in
            Guide.Cell(readings: library.machines.compactMap { m in
                guard let found = find(m, backend), let value = found.configuration[figure]?.value, value > 0 else { return nil }
                let least = GuideBuilder.columns.compactMap { find(m, $0)?.configuration[figure]?.value }.filter { $0 > 0 }.min() ?? value
                let mark: Mark = value <= 2 * least ? .good : value <= 5 * least ? .costly : .fails
                return found.with("\(mark.rawValue) \(GuideBuilder.figure(found.configuration, figure))", magnitude: GuideBuilder.magnitude(found.configuration, figure))
            })
        })
    }

    private func suspend(_ m: MachineResults, _ backend: String, _ matches: (SuspendExperiment.Result) -> Bool) -> SuspendExperiment.Result? {
        m.suspend?.results.first { $0.backend == backend && matches($0) }
    }

    private func reading(_ m: MachineResults, _ mark: Mark, _ text: String, _ file: String, _ magnitude: Guide.Magnitude? = nil) -> Guide.Reading {
        Guide.Reading(machine: m.folder, text: "\(mark.rawValue) \(text)", magnitude: magnitude, files: ["\(m.folder)/\(file)"])
    }

    private func freeze(_ m: MachineResults, _ backend: String) -> Guide.Reading? {
        guard let r = suspend(m, backend, {
            $0.scenario.kill == nil && $0.scenario.clockJumpSeconds == nil && $0.scenario.freezeMs == 650
                && $0.scenario.pausedResumeAfterMs == nil && $0.scenario.notifiesLifecycle != true
        }), let late = r.finishErrorsMs.max() else { return nil }
        let mark: Mark = late <= 100 && (r.finishErrorsMs.min() ?? 0) >= -1 && r.lostFinishes == 0 && r.doubledFinishes == 0 ? .good : .fails
        return reading(m, mark, GuideBuilder.finished(r.finishErrorsMs, against: "it"), MachineResults.suspendFile,
                       .init(value: late, unit: .milliseconds))
    }

    private func clockJump(_ m: MachineResults, _ backend: String) -> Guide.Reading? {
        guard let r = suspend(m, backend, { $0.scenario.kill == nil && $0.scenario.clockJumpSeconds != nil }),
              let early = r.finishErrorsMs.min()
        else { return nil }
        return early < -1
            ? reading(m, .fails, "moved: " + GuideBuilder.finished(r.finishErrorsMs, against: "its deadline"), MachineResults.suspendFile)
            : reading(m, .good, "not moved", MachineResults.suspendFile)
    }

    private func tenThousand(_ m: MachineResults, _ backend: String) -> Guide.Reading? {
        guard let found = full.config(m, GuideBuilder.defaultRun, backend, 10_000) else { return nil }
        return keepsUp(found)
    }

    private func million(_ m: MachineResults, _ backend: String) -> Guide.Reading? {
        // Alone in its process where it was run so (the recommended backend, task), else after
        // the other backends in one process.
        let alone = full.config(m, backend == "task" ? GuideBuilder.tickSecondTask : GuideBuilder.million, backend, 1_000_000)
        guard let found = alone ?? full.config(m, GuideBuilder.tickSecond, backend, 1_000_000) else { return nil }
        return keepsUp(found)
    }

    private func keepsUp(_ found: GuideBuilder.Found) -> Guide.Reading {
        let c = found.configuration
        if let cut = c.outcome.cutOff {
            return found.with("❌ cut off: \(ReportFormat.count(cut.finished)) of \(ReportFormat.count(cut.countdowns)) finished", magnitude: nil)
        }
        let mark: Mark = KeepsUp.keptUp(c) ? .good : .fails
        return found.with("\(mark.rawValue) p99 \(GuideBuilder.figure(c, .tickP99)), \(GuideBuilder.figure(c, .cpu)) CPU",
                          magnitude: GuideBuilder.magnitude(c, .tickP99))
    }

    private func tickSecond(_ m: MachineResults, _ backend: String, _ count: Int) -> GuideBuilder.Found? {
        full.config(m, backend == "task" ? GuideBuilder.tickSecondTask : GuideBuilder.tickSecond, backend, count)
    }

    private var full: GuideBuilder { GuideBuilder(library: library) }

    // MARK: - A fleet

    /// The Redis strategies in a line each: what the suite judged, and the largest scale measured.
    private var fleet: [Guide.Statement] {
        ["redis(zset)", "redis(keyspace)"].map { strategy in
            Guide.Statement(title: "`\(strategy)`", cell: Guide.Cell(readings: library.machines.compactMap { m in
                guard let report = m.fleetConformance?.reports.first(where: { $0.backend == strategy }) else { return nil }
                let failed = report.results.filter { $0.verdict == .fail }.map(\.id)
                let passed = report.results.filter { $0.verdict == .pass }.count
                let text = failed.isEmpty
                    ? "✅ passes all \(passed) checks that apply, the fleet's across processes and faults"
                    : "❌ fails \(failed.prefix(2).map { "`\($0)`" }.joined(separator: ", "))\(failed.count > 2 ? " and \(failed.count - 2) more" : "")"
                return Guide.Reading(machine: m.folder, text: text, magnitude: nil,
                                     files: ["\(m.folder)/\(MachineResults.fleetFolder)/\(MachineResults.conformanceFile)"])
            }))
        }.filter { !$0.cell.readings.isEmpty }
    }
}
