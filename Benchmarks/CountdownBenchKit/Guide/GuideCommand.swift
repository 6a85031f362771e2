import Foundation

/// `countdown-bench guide`: the README's guide at a glance, each machine's README's full guide
/// and the charts, written from the committed result files, so that no figure is copied by hand.
struct GuideCommand {
    static let usage = """
        USAGE: countdown-bench guide [--results DIR] [--check README.md | --write README.md]

        Reads every machine folder in the results folder (run.json and each subfolder's,
        conformance.json, suspend.json, redis/) and writes the guide: at a glance in the README
        (a mark and one figure a cell, two charts), in full in each machine's README.md (every
        figure, with the statements the articles quote); each cell links the file it came from,
        and over several machines gives the range, naming each one.

        OPTIONS:
          --results DIR       The results folder (default: results).
          --check FILE        Compare FILE's text between the guide's markers, each machine's
                              README's and the charts with what the guide writes: exit 0 when
                              identical, 1 at the first difference (its line, and for a table
                              its row and column).
          --write FILE        Write them: FILE's text between the markers (FILE is left as it
                              is when it cannot be read or lacks them), each machine README's
                              (markers added at its end when it has none), the charts.
          Neither: print the README's guide on stdout, links relative to the current folder.

        EXIT STATUS: 0 written or up to date; 1 the README differs, or a file cannot be read;
        2 bad arguments.
        """

    enum Mode: Equatable {
        case print
        case check(String)
        case write(String)
    }

    let results: String
    let mode: Mode
    let showHelp: Bool

    init(arguments: [String]) throws(UsageError) {
        var args = Arguments(arguments, subcommand: "guide")
        showHelp = args.flag("-h", "--help")
        results = try args.value("--results") ?? "results"
        let check = try args.value("--check"), write = try args.value("--write")
        try args.finish()
        switch (check, write) {
        case (let file?, nil): mode = .check(file)
        case (nil, let file?): mode = .write(file)
        case (nil, nil): mode = .print
        case (_?, _?): throw UsageError("guide takes --check or --write, not both")
        }
    }

    func run(_ output: inout StandardStreams) throws -> Int32 {
        if showHelp {
            output.write(Self.usage + "\n")
            return 0
        }
        let library = try ResultsLibrary.load(results)
        let glance = GlanceBuilder(library: library).build()
        let charts = GuideCharts(library: library).charts
        let first = library.machines.first.map { m in charts.filter { $0.path.hasPrefix("\(m.folder)/") } } ?? []
        switch mode {
        case .print:
            output.write(GlanceMarkdown(guide: glance, linkBase: Self.relativePath(to: results, from: "."), charts: first).text)
            return 0
        case .check(let file):
            let section = try GuideSection(of: try Self.read(file), file: file)
            let markdown = GlanceMarkdown(guide: glance, linkBase: Self.relativePath(to: results, from: Self.folder(of: file)), charts: first)
            var difference = section.firstDifference(from: markdown.lines, columns: glance.columns, file: file)
            for (path, full) in machineGuides(library) where difference == nil {
                let machineSection = try GuideSection(of: try Self.read(path), file: path)
                difference = machineSection.firstDifference(from: full.lines, columns: full.guide.columns, file: path)
            }
            for chart in charts where difference == nil && (try? String(contentsOfFile: "\(results)/\(chart.path)", encoding: .utf8)) != chart.svg {
                difference = "\(results)/\(chart.path): not the chart the results draw"
            }
            if let difference {
                output.writeError("countdown-bench guide: \(difference)\n"
                    + "The guide is not what the results say: run `swift run -c release countdown-bench guide --write \(file)` and commit what it writes.\n")
                return 1
            }
            output.writeError("countdown-bench guide: \(file), every machine's README and the charts hold the guide of \(results) (\(glance.rows.count) rows, \(glance.machines.count) machine(s))\n")
            return 0
        case .write(let file):
            let text = try Self.read(file)
            let section = try GuideSection(of: text, file: file)
            let markdown = GlanceMarkdown(guide: glance, linkBase: Self.relativePath(to: results, from: Self.folder(of: file)), charts: first)
            // Everything read and made before anything is written: a file that cannot be read
            // leaves every file as it was.
            var writes: [(String, String)] = []
            for (path, full) in machineGuides(library) {
                let machineText = GuideSection.withMarkers(try Self.read(path))
                writes.append((path, try GuideSection(of: machineText, file: path).replaced(by: full.text)))
            }
            writes += charts.map { ("\(results)/\($0.path)", $0.svg) }
            writes.append((file, section.replaced(by: markdown.text)))
            var changed = 0
            for (path, content) in writes where (try? String(contentsOfFile: path, encoding: .utf8)) != content {
                do {
                    try content.write(toFile: path, atomically: true, encoding: .utf8)
                } catch {
                    throw GuideError("cannot write \(path): \(error.localizedDescription)")
                }
                changed += 1
            }
            output.writeError(changed == 0
                ? "countdown-bench guide: \(file), every machine's README and the charts already hold the guide\n"
                : "countdown-bench guide: wrote the guide into \(file), every machine's README and its charts (\(changed) file(s) changed; \(glance.rows.count) rows, \(glance.machines.count) machine(s))\n")
            return 0
        }
    }

    /// Each machine's README and the full guide of that machine, its links relative to it.
    private func machineGuides(_ library: ResultsLibrary) -> [(String, GuideMarkdown)] {
        library.machines.map { m in
            let one = ResultsLibrary(machines: [m])
            return ("\(results)/\(m.folder)/README.md", GuideMarkdown(guide: GuideBuilder(library: one).build(), linkBase: ".."))
        }
    }

    private static func read(_ file: String) throws(GuideError) -> String {
        do {
            return try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw GuideError("cannot read \(file): \(error.localizedDescription)")
        }
    }

    private static func folder(of file: String) -> String {
        URL(fileURLWithPath: file).deletingLastPathComponent().path
    }

    /// `target` as a relative path from the folder `base`: `results` from the repository's root,
    /// `../results` from a folder beside it.
    static func relativePath(to target: String, from base: String) -> String {
        func components(_ path: String) -> [String] {
            URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().pathComponents.filter { $0 != "/" }
        }
        let to = components(target), from = components(base)
        var common = 0
        while common < to.count, common < from.count, to[common] == from[common] { common += 1 }
        let ups = Array(repeating: "..", count: from.count - common)
        return (ups + to[common...]).joined(separator: "/")
    }
}
