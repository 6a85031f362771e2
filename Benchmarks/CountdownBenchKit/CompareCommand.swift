import Foundation

/// `countdown-bench compare OLD.json NEW.json`: each figure's change between two runs, and an
/// exit status a CI job can act on.
struct CompareCommand {
    static let usage = """
        USAGE: countdown-bench compare OLD.json NEW.json [--threshold PCT] [--all]

        Compares two run.json files written by countdown-bench run --output (version 1 or 2;
        the folder it wrote stands for its run.json), configuration by configuration (backend,
        start pattern, N), figure by figure (pooled percentiles, medians of the rest). A figure
        regressed when it grew by more than the threshold and by more than its noise floor
        (0.2 ms for a p99, 2 points of CPU, …), and, when both runs have repeats, when every
        new repeat is worse than every old one. Improvements likewise. A percentile its samples
        do not resolve in either run, a configuration marked NOISY or DISTURBED in either run,
        the machine's own figure (the floor thread's CPU per wake-up) and the ratio over it are
        shown but never decide the exit status (CPU per wake-up decides alone). Every figure is
        better lower. A note says so when the two runs' memory (a dependent load, measured
        before each repeat) differed more than 1.5×: the machine, not the build, then moves the
        figures at large N.

        OPTIONS:
          --threshold PCT   The relative change that counts (default 10).
          --all             Show every figure, not only those that changed.

        EXIT STATUS: 0 nothing regressed or improved; 2 a regression (bad arguments also exit 2,
        with a one-line message on stderr); 4 improvements only; 1 an unreadable file.
        """

    let oldPath: String
    let newPath: String
    let threshold: Double
    let showAll: Bool
    let showHelp: Bool

    init(arguments: [String]) throws(UsageError) {
        var args = Arguments(arguments, subcommand: "compare")
        showHelp = args.flag("-h", "--help")
        showAll = args.flag("--all")
        if let text = try args.value("--threshold") {
            guard let value = Double(text), value.isFinite, value >= 0 else {
                throw UsageError("--threshold must be a percentage of zero or more, not '\(text)'")
            }
            threshold = value
        } else {
            threshold = 10
        }
        let paths = args.positionals()
        if showHelp {
            (oldPath, newPath) = ("", "")
            return
        }
        guard paths.count == 2 else {
            throw UsageError("compare needs two files, OLD.json and NEW.json (try compare --help)")
        }
        (oldPath, newPath) = (paths[0], paths[1])
        try args.finish()
    }

    enum Verdict: String {
        case regressed, improved, same
    }

    struct Row {
        let configuration: String
        let figure: Figure
        let old: FigureValue
        let new: FigureValue
        let verdict: Verdict
        /// Why the verdict is not called: too few samples, noisy repeats, or a figure of the machine.
        let caveat: String?
        var change: Double { old.value == 0 ? (new.value == 0 ? 0 : .infinity) : (new.value - old.value) / old.value * 100 }
    }

    func run(_ output: inout StandardStreams) throws -> Int32 {
        if showHelp {
            output.write(Self.usage + "\n")
            return 0
        }
        let old = try Self.load(oldPath), new = try Self.load(newPath)
        var notes: [String] = []
        if old.machine.summary != new.machine.summary {
            notes.append("the runs come from different machines or builds:\n  old: \(old.machine.summary)\n  new: \(new.machine.summary)")
        }
        if let a = old.memory, let b = new.memory, a.differs(from: b), let both = MemoryText.compared(old: a, new: b) {
            notes.append("the machine's memory differed: a dependent load took \(both); figures at large N move with it")
        }
        if old.options.tickMs != new.options.tickMs || old.options.durationMs != new.options.durationMs {
            notes.append("the runs used different ticks or durations; their figures are not comparable one to one")
        }
        let oldByID = Dictionary(old.configurations.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let newIDs = Set(new.configurations.map(\.id))
        var rows: [Row] = []
        for configuration in new.configurations {
            guard let before = oldByID[configuration.id] else {
                notes.append("only in NEW: \(configuration.id)")
                continue
            }
            for figure in Figure.allCases {
                guard let a = before[figure], let b = configuration[figure] else { continue }
                let caveat: String? = figure.describesMachine ? "the machine"
                    : figure.dividesByMachine ? "over the machine's"
                    : !a.isResolved || !b.isResolved ? "too few samples"
                    : before.isNoisy || configuration.isNoisy ? "noisy"
                    : before.isDisturbed || configuration.isDisturbed ? "disturbed" : nil
                let verdict = verdict(old: a, new: b, figure: figure)
                rows.append(Row(
                    configuration: configuration.id, figure: figure, old: a, new: b,
                    verdict: caveat == nil ? verdict : .same, caveat: verdict == .same ? nil : caveat))
            }
        }
        for configuration in old.configurations where !newIDs.contains(configuration.id) {
            notes.append("only in OLD: \(configuration.id)")
        }

        var table = TextTable(columns: ["configuration", "figure", "old", "new", "change", ""])
        for row in rows where showAll || row.verdict != .same || row.caveat != nil {
            table.add([
                row.configuration, row.figure.name, ReportFormat.figure(row.figure, row.old),
                ReportFormat.figure(row.figure, row.new),
                row.change.isFinite ? String(format: "%+.1f %%", row.change) : "new",
                row.verdict != .same ? row.verdict.rawValue.uppercased() : row.caveat.map { "(\($0))" } ?? "",
            ])
        }
        let regressed = rows.filter { $0.verdict == .regressed }.count
        let improved = rows.filter { $0.verdict == .improved }.count
        output.write(table.render())
        output.write("\n\(rows.count) figures compared (threshold \(ReportFormat.significant(threshold)) %): \(regressed) regressed, \(improved) improved, \(rows.count - regressed - improved) within noise\n")
        for note in notes { output.write("note: \(note)\n") }
        if regressed > 0 { return 2 }
        if improved > 0 { return 4 }
        return 0
    }

    /// With both runs' repeats known, a change counts only when every new repeat lies beyond
    /// every old one.
    private func verdict(old: FigureValue, new: FigureValue, figure: Figure) -> Verdict {
        let delta = new.value - old.value
        guard abs(delta) > figure.noise, abs(delta) > abs(old.value) * threshold / 100 else { return .same }
        if delta > 0 {
            guard let a = old.repeats, let b = new.repeats else { return .regressed }
            return b.min > a.max ? .regressed : .same
        }
        guard let a = old.repeats, let b = new.repeats else { return .improved }
        return b.max < a.min ? .improved : .same
    }

    static func load(_ path: String) throws(RunFileError) -> RunDocument { try RunDocumentFile.load(path) }
}
