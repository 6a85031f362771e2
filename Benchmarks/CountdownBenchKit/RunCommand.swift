import Countdown
import CountdownSupport
import Foundation

/// `countdown-bench run`: the benchmark. Every backend × N concurrent countdowns × start
/// pattern, repeated, beside the machine's timer floor; tables on stdout, files with --output.
struct RunCommand {
    static let usage = """
        USAGE: countdown-bench run [--quick] [--backend NAMES] [--counts N,N,…] [--tick DURATION]
                                   [--duration DURATION] [--repeat N] [--min-samples N] [--keys short|real]
                                   [--starts spread|burst|both] [--grace DURATION]
                                   [--floor-period DURATION] [--format text|json|csv|markdown] [--output DIR]
                                   [--redis URL] [--namespace NAME] [--no-progress] [--allow-debug]

        Runs N countdowns at once on each backend and records every event: tick lateness (p50, p90,
        p99, p99.9, max) against start + k·T, finish error, start delay, CPU, context switches,
        busy threads, memory per countdown, and the time of one start and one cancel with N
        countdowns active. Every figure carries its sample count; percentiles pool the repeats'
        samples and are shown only where the samples resolve them (p99: 100, p99.9: 1 000).
        A floor thread (clock_nanosleep to absolute deadlines) runs alone before each repeat and
        through every configuration's window, and /proc/stat says how busy the rest of the
        machine was. A configuration whose repeats disagree more than 2× on p99 is marked NOISY;
        one that cannot keep up is cut off by its time limit and says what happened.

        OPTIONS:
          --quick               A smoke run for CI (N = 10 and 1 000, one repeat; ~30 s).
          --backend NAMES       Comma list of \(CountdownBackend.names.joined(separator: ", ")), or all (default).
          --counts N,N,…        Concurrent countdowns (default 1,10,100,1000,10000; 10k = 10000,
                                1m = 1000000; at most 10m).
          --tick DURATION       The tick interval T (default 10ms; e.g. 1s, 200ms).
          --duration DURATION   Each countdown's length D (default 1s).
          --repeat N            Repeats of the whole sweep (default 3).
          --keys short|real     The countdowns' keys: real (default; sms-code:+86138… and
                                rate-limit:user:…, 23 and 26 bytes, as an app's and a server's keys
                                are, beyond the 15 bytes Swift stores inline) or short
                                (countdown-<n>, 11–16 bytes).
          --min-samples N       Tick samples each configuration collects at least over its repeats
                                (default 2000); small N run rounds of countdowns to get them.
          --starts PATTERN      spread (evenly over one tick), burst (all at once), or both (default).
          --grace DURATION      How long past a round's last expected finish it may run before it
                                is cut off (default 1s).
          --floor-period DURATION
                                How often the floor thread wakes (default 1ms; 100us to 1s). Its
                                wake-up is the CPU floor a scheduler's is read against, and a
                                thread that slept longer wakes colder: to read one scheduler's
                                wake-ups against a floor woken as often, give its own period
                                (the tick at N = 1, spread).
          --format FORMAT       What stdout gets: text tables (default), json, csv or markdown.
          --output DIR          Also write DIR/run.json (compact, versioned), run.csv, README.md,
                                SVG charts, hgrm/*.hgrm and benchmark-action.json. {machine} in DIR
                                becomes this machine's folder name: results/{machine}.
        \(RedisArguments.help)
          --no-progress         No progress on stderr.
          --allow-debug         Measure even in a debug build (its figures mean little).

        The default sweep takes about 6 minutes on a 2-core machine. Figures are Linux figures.
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
        if let names = try args.value("--backend") { settings.backends = try CountdownBackend.selectMeasured(names, for: "run") }
        try RedisArguments(&args).use()
        if let list = try args.value("--counts") { settings.counts = try Self.counts(list) }
        if let tick = try args.duration("--tick") { settings.tick = tick }
        if let duration = try args.duration("--duration") { settings.duration = duration }
        if let grace = try args.duration("--grace") { settings.grace = grace }
        if let period = try args.duration("--floor-period") {
            guard (Duration.microseconds(100)...Duration.seconds(1)).contains(period) else {
                throw UsageError("--floor-period must be between 100us and 1s, not \(period.text)")
            }
            settings.floorPeriod = period
        }
        if let repeats = try args.wholeNumber("--repeat", in: 1...100) { settings.repeats = repeats }
        if let keys = try args.choice("--keys", in: KeyShape.allCases.map(\.rawValue)) { settings.keys = KeyShape(rawValue: keys)! }
        if let samples = try args.wholeNumber("--min-samples", in: 0...1_000_000) { settings.minimumTickSamples = samples }
        switch try args.choice("--starts", in: ["spread", "burst", "both"]) {
        case "spread": settings.patterns = [.spread]
        case "burst": settings.patterns = [.burst]
        default: break
        }
        format = try args.choice("--format", in: ["text", "json", "csv", "markdown"]) ?? "text"
        outputDirectory = try args.value("--output").map(Machine.expand)
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
        defer { RedisArguments.leaveServerAsFound() }
        if !Machine.isReleaseBuild { progress.note("WARNING: a debug build; these figures mean little") }
        if let outputDirectory {
            // Fail now, not after minutes of measuring.
            try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        }
        let document = try Sweep(settings: settings, arguments: arguments).run(onEvent: progress.show)
        if document.ranOnBusyMachine {
            progress.note("WARNING: the machine was busy during some configurations (steal or other processes); their figures say so")
        }
        output.write(try Self.render(document, format: format))
        if let outputDirectory {
            let written = try RunFiles(document: document).write(to: outputDirectory)
            progress.note("wrote \(written.count) files to \(outputDirectory)")
        }
        return 0
    }

    /// The run as stdout gets it in `format`.
    static func render(_ document: RunDocument, format: String) throws -> String {
        switch format {
        case "json": try RunDocumentFile.encode(document)
        case "csv": CSVRunReport(document: document).render()
        case "markdown": MarkdownRunReport(document: document, neighbours: []).render()
        default: TextRunReport(document: document, isTerminal: isatty(STDOUT_FILENO) == 1).render()
        }
    }

    /// The most countdowns one configuration may run: ten million, the largest run committed
    /// (its process held about 3.6 GB resident, the benchmark's own keys and records included).
    static var maximumCount: Int { 10_000_000 }

    /// `1,10,100`, with `k` for thousands and `m` for millions: `1k,10k,1m`.
    static func counts(_ list: String) throws(UsageError) -> [Int] {
        var counts: [Int] = []
        for item in list.split(separator: ",", omittingEmptySubsequences: false) {
            var text = item.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "")
            var scale = 1
            if let suffix = text.lowercased().last, let factor = ["k": 1000, "m": 1_000_000][suffix] {
                scale = factor
                text.removeLast()
            }
            guard let value = Int(text), value > 0, value <= maximumCount / scale else {
                throw UsageError("--counts takes whole numbers from 1 to \(maximumCount) separated by commas, not '\(item)'")
            }
            counts.append(value * scale)
        }
        return Array(Set(counts)).sorted()
    }
}
