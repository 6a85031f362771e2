import Foundation

/// `countdown-bench compare OLD.json NEW.json`: each figure's change between two runs, and an
/// exit status a CI job can act on.
struct CompareCommand {
    static let usage = """
        USAGE: countdown-bench compare OLD.json NEW.json [--threshold PCT] [--all]

        Compares two run.json files written by countdown-bench run --output, configuration by
        configuration (backend, start pattern, N), figure by figure (medians over the repeats).
        A figure regressed when it grew by more than the threshold and by more than its noise
        floor (0.2 ms for a p99, 2 points of CPU, …), and, when both runs have repeats, when
        every new repeat is worse than every old one. Improvements likewise. Every figure is
        better lower.

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
        let old: Spread
        let new: Spread
        let verdict: Verdict
        var change: Double { old.median == 0 ? (new.median == 0 ? 0 : .infinity) : (new.median - old.median) / old.median * 100 }
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
            for figure in Figure.all {
                guard let a = before.summary[figure.name], let b = configuration.summary[figure.name] else { continue }
                let separate = before.repeats.count > 1 && configuration.repeats.count > 1
                rows.append(Row(
                    configuration: configuration.id, figure: figure, old: a, new: b,
                    verdict: verdict(old: a, new: b, figure: figure, requireSeparation: separate)))
            }
        }
        for configuration in old.configurations where !newIDs.contains(configuration.id) {
            notes.append("only in OLD: \(configuration.id)")
        }

        var table = TextTable(columns: ["configuration", "figure", "old", "new", "change", ""])
        for row in rows where showAll || row.verdict != .same {
            table.add([
                row.configuration, row.figure.name, ReportFormat.figure(row.figure, row.old.median),
                ReportFormat.figure(row.figure, row.new.median),
                row.change.isFinite ? String(format: "%+.1f %%", row.change) : "new",
                row.verdict == .same ? "" : row.verdict.rawValue.uppercased(),
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

    private func verdict(old: Spread, new: Spread, figure: Figure, requireSeparation: Bool) -> Verdict {
        let delta = new.median - old.median
        guard abs(delta) > figure.noise, abs(delta) > abs(old.median) * threshold / 100 else { return .same }
        if delta > 0 {
            return !requireSeparation || new.min > old.max ? .regressed : .same
        }
        return !requireSeparation || new.max < old.min ? .improved : .same
    }

    static func load(_ path: String) throws -> RunDocument {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CompareError("cannot read \(path): \(error.localizedDescription)")
        }
        struct Header: Decodable { let format: String; let version: Int }
        guard let header = try? JSONDecoder().decode(Header.self, from: data), header.format == RunDocument.currentFormat else {
            throw CompareError("\(path) is not a run.json written by countdown-bench run --output")
        }
        guard header.version == RunDocument.currentVersion else {
            throw CompareError("\(path) has format version \(header.version); this countdown-bench reads version \(RunDocument.currentVersion)")
        }
        do {
            return try JSONDecoder().decode(RunDocument.self, from: data)
        } catch {
            throw CompareError("\(path) is damaged: \(error)")
        }
    }
}

/// A file `compare` cannot use: reported in one line, exit status 1.
struct CompareError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
