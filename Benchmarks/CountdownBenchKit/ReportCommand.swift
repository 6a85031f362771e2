import Foundation

/// `countdown-bench report RUN.json`: renders a run that was already measured again (tables,
/// Markdown, CSV, charts) without measuring anything, so that a better report never needs a
/// re-run, and results/ is still written only by the tool.
struct ReportCommand {
    static let usage = """
        USAGE: countdown-bench report RUN.json [--format text|json|csv|markdown] [--output DIR]

        Prints the run in RUN.json (written by countdown-bench run --output; version 1 or 2) as
        run would have, and with --output writes its files again (run.json in the current
        version, run.csv, README.md, SVG charts, hgrm/, benchmark-action.json).
        """

    let path: String
    let format: String
    let outputDirectory: String?
    let showHelp: Bool

    init(arguments: [String]) throws(UsageError) {
        var args = Arguments(arguments, subcommand: "report")
        showHelp = args.flag("-h", "--help")
        format = try args.choice("--format", in: ["text", "json", "csv", "markdown"]) ?? "text"
        outputDirectory = try args.value("--output").map(Machine.expand)
        let paths = args.positionals()
        try args.finish()
        guard showHelp || paths.count == 1 else { throw UsageError("report needs one file, RUN.json (try report --help)") }
        path = paths.first ?? ""
    }

    func run(_ output: inout StandardStreams) throws -> Int32 {
        if showHelp {
            output.write(Self.usage + "\n")
            return 0
        }
        let document = try CompareCommand.load(path)
        output.write(try RunCommand.render(document, format: format))
        if let outputDirectory {
            try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
            let written = try RunFiles(document: document).write(to: outputDirectory)
            Progress(enabled: true).note("wrote \(written.count) files to \(outputDirectory)")
        }
        return 0
    }
}
