import Foundation

/// The `countdown-bench` command line: parses the subcommand and hands over to it.
/// Exit status: 0 success, 1 a failure the command reports, 2 bad arguments.
///
/// A package with backends of its own runs the same benchmark and conformance suite on them
/// from an executable of its own:
///
/// ```swift
/// import CountdownBenchKit
/// let mine = CountdownBackend(name: "my-backend") { options in try MyScheduler(tick: options.tickInterval) }
/// exit(BenchCommand.run(arguments: BenchCommand.processArguments(), adding: [mine]))
/// ```
public enum BenchCommand {
    static let usage = """
        countdown-bench — what each keyed-countdown strategy costs and gets wrong, measured.

        USAGE: countdown-bench <subcommand> [options]

        SUBCOMMANDS:
          run           The benchmark: every backend × N concurrent countdowns, beside the timer floor.
          compare       Two runs' JSON side by side; exit 2 on a regression, 4 on improvements only.
          report        A run's files written again from its run.json, without measuring.
          suspend       Each backend in a child process frozen with SIGSTOP and continued: what the freeze did.
          list          Each backend's name, mechanism and declared profile.
          conformance   The conformance suite on each backend: checks × backends.
          guide         The README's decision table, written from every machine's files in results/.
          fleet         The Redis strategies at scale, beside idle keys, and what a fleet keeps through races and faults.

        OPTIONS:
          -h, --help    Show this help, or a subcommand's: countdown-bench list --help.

        Backends: \(CountdownBackend.names.joined(separator: ", ")).
        Figures are measured on Linux (corelibs Foundation and libdispatch); see README.md.
        """

    /// This process's arguments, without the program. Read from /proc/self/cmdline when Swift
    /// saw none: with libfaketime preloaded (the worker of a wall-clock experiment), Swift's
    /// `CommandLine.arguments` comes back empty on Linux.
    public static func processArguments() -> [String] {
        if CommandLine.arguments.count <= 1,
           let data = FileManager.default.contents(atPath: "/proc/self/cmdline"), !data.isEmpty {
            // NUL-terminated words: the last split is the empty rest after the final NUL.
            var words = data.split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
            if words.last == "" { words.removeLast() }
            return Array(words.dropFirst())
        }
        return Array(CommandLine.arguments.dropFirst())
    }

    /// Runs the subcommand `arguments` name; `adding`: backends chosen by name beside the
    /// built-in ones (`--backend my-backend`), never by `all`. Returns the exit status.
    public static func run(arguments: [String], adding backends: [CountdownBackend] = []) -> Int32 {
        CountdownBackend.add(backends)
        var output = StandardStreams()
        return run(arguments: arguments, output: &output)
    }

    static func run(arguments: [String], output: inout StandardStreams) -> Int32 {
        do {
            guard let subcommand = arguments.first else {
                throw UsageError("no subcommand given (try --help)")
            }
            let rest = Array(arguments.dropFirst())
            switch subcommand {
            case "-h", "--help", "help":
                output.write(usage + "\n")
                return 0
            case "run":
                return try RunCommand(arguments: rest).run(&output)
            case "compare":
                return try CompareCommand(arguments: rest).run(&output)
            case "report":
                return try ReportCommand(arguments: rest).run(&output)
            case "suspend":
                return try SuspendCommand(arguments: rest).run(&output)
            case "worker":
                return try WorkerCommand(arguments: rest).run(&output)
            case "list":
                return try ListCommand(arguments: rest).run(&output)
            case "conformance":
                return try ConformanceCommand(arguments: rest).run(&output)
            case "guide":
                return try GuideCommand(arguments: rest).run(&output)
            case "fleet":
                return try FleetCommand(arguments: rest).run(&output)
            default:
                throw UsageError("unknown subcommand '\(subcommand)' (try --help)")
            }
        } catch let error as UsageError {
            output.writeError("countdown-bench: \(error.message)\n")
            return 2
        } catch {
            output.writeError("countdown-bench: \(error)\n")
            return 1
        }
    }
}

/// Bad command-line input: reported in one line, exit status 2.
struct UsageError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// stdout and stderr; or, for tests, a buffer that keeps what would have been written.
struct StandardStreams {
    private(set) var captured: String?

    init(capturing: Bool = false) { captured = capturing ? "" : nil }

    mutating func write(_ text: String) {
        if captured != nil { captured! += text } else { FileHandle.standardOutput.write(Data(text.utf8)) }
    }

    mutating func writeError(_ text: String) {
        if captured != nil { captured! += text } else { FileHandle.standardError.write(Data(text.utf8)) }
    }
}
