import Countdown
import CountdownSupport
import Foundation

/// `countdown-bench run`: the benchmark. Every backend × N concurrent countdowns × start
/// pattern, repeated, beside the machine's timer floor; tables on stdout, files with --output.
struct RunCommand {
    static let usage = """
        USAGE: countdown-bench run [--quick] [--backend NAMES] [--counts N,N,…] [--tick DURATION]
                                   [--duration DURATION] [--repeat N] [--starts spread|burst|both]
                                   [--grace DURATION] [--format text|json|csv|markdown] [--output DIR]
                                   [--no-progress] [--allow-debug]

        Runs N countdowns at once on each backend and records every event: tick lateness (p50, p90,
        p99, p99.9, max) against start + k·T, finish error, start delay, CPU, context switches,
        peak threads, memory per countdown, and the time of one start and one cancel with N
        countdowns active. The floor, one thread sleeping to absolute deadlines with
        clock_nanosleep, is measured in the same run; each p99 is also shown as a ratio to it.
        A configuration that cannot keep up is cut off by its time limit and says what happened.

        OPTIONS:
          --quick               A smoke run for CI (N = 10 and 1 000, one repeat; ~20 s).
          --backend NAMES       Comma list of \(CountdownCatalog.names.joined(separator: ", ")), or all (default).
          --counts N,N,…        Concurrent countdowns (default 1,10,100,1000,10000,100000; 10k = 10000).
          --tick DURATION       The tick interval T (default 200ms; e.g. 1s, 250ms, 500us).
          --duration DURATION   Each countdown's length D (default 1s).
          --repeat N            Repeats of the whole sweep (default 3); the median is reported.
          --starts PATTERN      spread (evenly over one tick), burst (all at once), or both (default).
          --grace DURATION      How long past the last expected finish a configuration may run
                                before it is cut off (default 1s).
          --format FORMAT       What stdout gets: text tables (default), json, csv or markdown.
          --output DIR          Also write DIR/run.json (versioned, with the raw histograms),
                                DIR/run.csv, DIR/README.md and SVG charts.
          --no-progress         No progress on stderr.
          --allow-debug         Measure even in a debug build (its figures mean little).

        The default sweep takes about 4 minutes on a 2-core machine. Figures are Linux figures.
        EXIT STATUS: 0 measured; 1 an error; 2 bad arguments.
        """

    var settings: RunSettings
    let format: String
    let outputDirectory: String?
    let showProgress: Bool
    let showHelp: Bool
    let allowDebug: Bool
    let arguments: [String]

    init(arguments: [String]) throws(UsageError) {
        self.arguments = ["run"] + arguments
        var args = Arguments(arguments, subcommand: "run")
        showHelp = args.flag("-h", "--help")
        showProgress = !args.flag("--no-progress")
        allowDebug = args.flag("--allow-debug")
        var settings = args.flag("--quick") ? RunSettings.quick : RunSettings()
        if let names = try args.value("--backend") { settings.backends = try CountdownCatalog.select(names) }
        if let list = try args.value("--counts") { settings.counts = try Self.counts(list) }
        if let tick = try args.duration("--tick") { settings.tick = tick }
        if let duration = try args.duration("--duration") { settings.duration = duration }
        if let grace = try args.duration("--grace") { settings.grace = grace }
        if let repeats = try args.wholeNumber("--repeat", in: 1...100) { settings.repeats = repeats }
        switch try args.choice("--starts", in: ["spread", "burst", "both"]) {
        case "spread": settings.patterns = [.spread]
        case "burst": settings.patterns = [.burst]
        default: break
        }
        format = try args.choice("--format", in: ["text", "json", "csv", "markdown"]) ?? "text"
        outputDirectory = try args.value("--output")
        try args.finish()
        guard settings.tick >= CountdownLimits.minimumTickInterval else {
            throw UsageError("--tick must be at least 1ms, not \(settings.tick.text)")
        }
        guard settings.duration <= .seconds(120) else {
            throw UsageError("--duration must be at most 120s (the operation-queue backend's maximum), not \(settings.duration.text)")
        }
        self.settings = settings
    }

    func run(_ output: inout StandardStreams) throws -> Int32 {
        if showHelp {
            output.write(Self.usage + "\n")
            return 0
        }
        guard Machine.isReleaseBuild || allowDebug else {
            throw UsageError("refusing to measure a debug build: swift run -c release countdown-bench run … (or --allow-debug)")
        }
        let progress = Progress(enabled: showProgress)
        if !Machine.isReleaseBuild { progress.note("WARNING: a debug build; these figures mean little") }
        if let outputDirectory {
            // Fail now, not after minutes of measuring.
            try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        }
        let sweep = Sweep(settings: settings, arguments: arguments, progress: progress)
        progress.note("\(sweep.steps.count) configurations × \(settings.repeats) repeat(s), about \(Int(sweep.estimatedSeconds.rounded())) s if every backend keeps up")
        let started = Date()
        let document = try sweep.run()
        progress.finish()
        progress.note("measured in \(Int(Date().timeIntervalSince(started).rounded())) s")

        output.write(try Self.render(document, format: format))
        if let outputDirectory { try Self.write(document, to: outputDirectory, progress: progress) }
        return 0
    }

    /// The run as stdout gets it in `format`.
    static func render(_ document: RunDocument, format: String) throws -> String {
        switch format {
        case "json": try json(document)
        case "csv": CSVRunReport(document: document).render()
        case "markdown": MarkdownRunReport(document: document, neighbours: []).render()
        default: TextRunReport(document: document, isTerminal: isatty(STDOUT_FILENO) == 1).render()
        }
    }

    static func write(_ document: RunDocument, to directory: String, progress: Progress) throws {
        let url = URL(fileURLWithPath: directory)
        var files: [(String, String)] = [
            ("run.json", try json(document)),
            ("run.csv", CSVRunReport(document: document).render()),
        ]
        files += RunCharts(document: document).files
        let ours = Set(files.map(\.0) + ["README.md"])
        let neighbours = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { !ours.contains($0) && !$0.hasPrefix(".") }.sorted()
            .map { name -> String in
                var isDirectory: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: url.appendingPathComponent(name).path, isDirectory: &isDirectory)
                if isDirectory.boolValue {
                    let readme = url.appendingPathComponent(name).appendingPathComponent("README.md").path
                    return FileManager.default.fileExists(atPath: readme)
                        ? "[\(name)/](\(name)/README.md): another run, presented in its own README.md" : "\(name)/"
                }
                if name.hasPrefix("conformance.") {
                    return "[\(name)](\(name)): the conformance matrix, written by countdown-bench conformance --output"
                }
                if name.hasPrefix("suspend.") {
                    return "[\(name)](\(name)): the suspension table, written by countdown-bench suspend --output"
                }
                return name
            }
        files.append(("README.md", MarkdownRunReport(document: document, neighbours: neighbours).render()))
        for (name, content) in files {
            try content.write(to: url.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        progress.note("wrote \(files.map(\.0).joined(separator: ", ")) to \(directory)")
    }

    static func json(_ document: RunDocument) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(document), as: UTF8.self) + "\n"
    }

    /// `1,10,100`, with `k` for thousands: `1k,10k`.
    static func counts(_ list: String) throws(UsageError) -> [Int] {
        var counts: [Int] = []
        for item in list.split(separator: ",", omittingEmptySubsequences: false) {
            var text = item.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "")
            var scale = 1
            if text.lowercased().hasSuffix("k") {
                scale = 1000
                text.removeLast()
            }
            guard let value = Int(text), value > 0, value <= 1_000_000 / scale else {
                throw UsageError("--counts takes whole numbers from 1 to 1000000 separated by commas, not '\(item)'")
            }
            counts.append(value * scale)
        }
        return Array(Set(counts)).sorted()
    }
}
