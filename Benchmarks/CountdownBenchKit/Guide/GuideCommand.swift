import Foundation

/// `countdown-bench guide`: the decision table of the README's "Choosing a strategy", written
/// from the committed result files of every machine, so that no figure there is copied by hand.
struct GuideCommand {
    static let usage = """
        USAGE: countdown-bench guide [--results DIR] [--check README.md | --write README.md]

        Reads every machine folder in the results folder (run.json and each subfolder's,
        conformance.json, suspend.json) and writes the decision table of "Choosing a strategy",
        with the statements its prose quotes, in Markdown: each cell its figure and a link to
        the file it came from; over several machines the range, naming each one.

        OPTIONS:
          --results DIR       The results folder (default: results).
          --check FILE        Compare FILE's text between the guide's markers with what the
                              guide writes: exit 0 when identical, 1 at the first difference
                              (its line, and for the table its row and column).
          --write FILE        Replace FILE's text between the markers with the guide. FILE is
                              left as it is when it cannot be read or lacks the markers.
          Neither: print the guide on stdout, links relative to the current folder.

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
        let guide = GuideBuilder(library: try ResultsLibrary.load(results)).build()
        switch mode {
        case .print:
            output.write(GuideMarkdown(guide: guide, linkBase: Self.relativePath(to: results, from: ".")).text)
            return 0
        case .check(let file):
            let section = try GuideSection(of: try Self.read(file), file: file)
            let markdown = GuideMarkdown(guide: guide, linkBase: Self.relativePath(to: results, from: Self.folder(of: file)))
            if let difference = section.firstDifference(from: markdown.lines, columns: guide.columns, file: file) {
                output.writeError("countdown-bench guide: \(difference)\n"
                    + "The README's guide is not what the results say: run `swift run -c release countdown-bench guide --write \(file)` and commit it.\n")
                return 1
            }
            output.writeError("countdown-bench guide: \(file) holds the guide of \(results) (\(guide.rows.count) rows, \(guide.machines.count) machine(s))\n")
            return 0
        case .write(let file):
            let text = try Self.read(file)
            let section = try GuideSection(of: text, file: file)
            let markdown = GuideMarkdown(guide: guide, linkBase: Self.relativePath(to: results, from: Self.folder(of: file)))
            let updated = section.replaced(by: markdown.text)
            if updated == text {
                output.writeError("countdown-bench guide: \(file) already holds the guide\n")
                return 0
            }
            do {
                try updated.write(toFile: file, atomically: true, encoding: .utf8)
            } catch {
                throw GuideError("cannot write \(file): \(error.localizedDescription)")
            }
            output.writeError("countdown-bench guide: wrote the guide into \(file) (\(guide.rows.count) rows, \(guide.machines.count) machine(s))\n")
            return 0
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
