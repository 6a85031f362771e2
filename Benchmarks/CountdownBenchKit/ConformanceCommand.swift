import Countdown
import CountdownConformance
import CountdownRedis
import Foundation

/// `countdown-bench conformance`: the conformance suite on the built-in backends, as a matrix.
struct ConformanceCommand {
    static let usage = """
        USAGE: countdown-bench conformance [--backend NAME] [--check ID] [--format text|json]
                                           [--seed N] [--operations N] [--output DIR] [--no-progress]
                                           [--redis URL] [--namespace NAME]

        Runs the conformance suite (CountdownConformance) on each backend and prints a matrix
        of checks × backends: contract checks, then profile checks, whose cells show what the
        backend declares. Figures and failure messages follow the matrix.

        OPTIONS:
          --backend NAME        \(CountdownBackend.names.joined(separator: ", ")), or all (default).
          --check ID            Only this check (repeatable as a comma list): \(CountdownConformance.checks.prefix(3).map(\.id).joined(separator: ", ")), …
          --format text|json    text (default) or JSON reports.
          --seed N              Seed of the randomized check (printed; use it to replay).
          --operations N        Operations of the randomized check (default 2000).
          --output DIR          Also write DIR/conformance.txt and DIR/conformance.json, with the
                                machine they were measured on (release builds only).
                                {machine} in DIR becomes this machine's folder name: results/{machine}.
          --no-progress         No progress lines on stderr.
        \(RedisArguments.help)

        EXIT STATUS: 0 every check passed; 1 a contract check failed; 3 only a profile check
        failed (a backend does not behave as it declares); 2 bad arguments.
        """

    let backends: [CountdownBackend]
    let checkIDs: Set<String>?
    let format: String
    let options: CountdownConformance.Options
    let showProgress: Bool
    let showHelp: Bool
    let outputDirectory: String?

    init(arguments: [String]) throws(UsageError) {
        var args = Arguments(arguments, subcommand: "conformance")
        showHelp = args.flag("-h", "--help")
        showProgress = !args.flag("--no-progress")
        backends = try CountdownBackend.select(try args.value("--backend") ?? "all", includingTests: true)
        try RedisArguments(&args).use()
        format = try args.choice("--format", in: ["text", "json"]) ?? "text"
        var options = CountdownConformance.Options()
        if let seed = try args.value("--seed") {
            guard let value = UInt64(seed) else { throw UsageError("--seed must be a whole number, not '\(seed)'") }
            options.seed = value
        }
        if let operations = try args.wholeNumber("--operations", in: 1...Int.max) {
            options.randomizedOperations = operations
        }
        self.options = options
        outputDirectory = try args.value("--output").map(Machine.expand)
        if outputDirectory != nil, !Machine.isReleaseBuild {
            throw UsageError("--output writes results, which come from a release build: swift run -c release countdown-bench …")
        }
        if let list = try args.value("--check") {
            let ids = Set(list.split(separator: ",").map(String.init))
            let known = Set(CountdownConformance.checks.map(\.id))
            if let unknown = ids.subtracting(known).sorted().first {
                throw UsageError("unknown check '\(unknown)'; see countdown-bench conformance --help")
            }
            checkIDs = ids
        } else {
            checkIDs = nil
        }
        try args.finish()
    }

    func run(_ output: inout StandardStreams) throws -> Int32 {
        if showHelp {
            output.write(Self.usage + "\n")
            return 0
        }
        if showProgress { output.writeError("conformance: seed \(options.seed)\n") }
        defer { RedisArguments.leaveServerAsFound() }
        var reports: [(CountdownBackend, CountdownProfile, ConformanceReport)] = []
        for backend in backends {
            if showProgress { output.writeError("conformance: \(backend)…\n") }
            let suite = try Self.suite(for: backend, options: options)
            let report = suite.run(only: checkIDs, concurrency: 6)
            let profile = try backend.profile()
            reports.append((backend, profile, report))
            if showProgress {
                output.writeError("conformance: \(backend): \(report.results.filter { $0.verdict == .pass }.count) of \(report.results.count) passed\n")
            }
        }
        let text = text(reports), json = try json(reports.map(\.2))
        output.write(format == "json" ? json : text)
        if let directory = outputDirectory {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try ("countdown-bench conformance — \(Machine.current.summary)\n\n" + text)
                .write(toFile: "\(directory)/conformance.txt", atomically: true, encoding: .utf8)
            try json.write(toFile: "\(directory)/conformance.json", atomically: true, encoding: .utf8)
            if showProgress { output.writeError("conformance: wrote \(directory)/conformance.txt and .json\n") }
        }
        if reports.contains(where: { !$0.2.meetsContract }) { return 1 }
        if reports.contains(where: { !$0.2.passed }) { return 3 }
        return 0
    }

    /// The suite on `backend`. A fleet backend's suite starts its members as this very command
    /// again, on the one backend and the same Redis (`store`, else the benchmark's), told to
    /// serve as a member.
    static func suite(
        for backend: CountdownBackend, options: CountdownConformance.Options, store: RedisEndpoint? = nil,
        executable: String = CountdownConformance.Relaunch.currentExecutable
    ) throws -> CountdownConformance {
        var options = options
        if backend.isFleet {
            #if Redis
            // The members find the server in REDIS_URL, set in their environment (with the
            // timeouts): a password goes into no process's arguments. The fault proxy forwards to
            // its host and port. Their keys go under the same root.
            let endpoint = try store ?? RedisTarget.endpoint()
            let arguments = ["conformance", "--backend", backend.description, "--no-progress", "--namespace", RedisTarget.root]
            let relaunch = CountdownConformance.Relaunch(executable: executable, arguments: arguments, environment: ["REDIS_URL": endpoint.secretURL, RedisTarget.runVariable: RedisTarget.run])
            options.fleet = .init(relaunch: relaunch, members: 3, store: endpoint.hostAndPort)
            #endif
        }
        return CountdownConformance(name: backend.description, options: options) { environment in
            try backend.makeScheduler(.init(environment))
        }
    }

    private func text(_ reports: [(CountdownBackend, CountdownProfile, ConformanceReport)]) -> String {
        var table = TextTable(columns: ["check"] + reports.map { $0.0.description })
        let ids = reports.first?.2.results.map(\.id) ?? []
        for id in ids {
            table.add([id] + reports.map { _, profile, report in
                guard let result = report.results.first(where: { $0.id == id }) else { return "-" }
                let declared = Self.declared(id, in: profile).map { " (\($0))" } ?? ""
                return (result.verdict == .fail ? "FAIL" : result.verdict.rawValue) + declared
            })
        }
        var out = table.render()
        out += "\nseed \(options.seed)\n"
        for (backend, _, report) in reports {
            let virtual = report.results.filter { $0.time == .virtual }.map(\.id)
            out += "\n\(backend)\(virtual.isEmpty ? "" : " — in virtual time: \(virtual.count == report.results.count ? "every check" : virtual.joined(separator: ", "))")\n"
            for result in report.results {
                if let figure = result.figure { out += "  \(result.id): \(figure)\n" }
                if result.verdict != .pass {
                    for message in result.shownMessages { out += "  \(result.id) \(result.verdict.rawValue): \(message)\n" }
                }
            }
        }
        return out
    }

    /// What a profile check compares against: the backend's declaration.
    private static func declared(_ id: String, in p: CountdownProfile) -> String? {
        switch id {
        case "profile.wall-clock": p.wallClockJump.rawValue
        case "profile.slow-observer": p.slowObserver.rawValue
        case "profile.drift": p.drift.rawValue
        case "profile.capacity": p.capacity.map { "capacity \($0)" } ?? "no capacity"
        default: nil
        }
    }

    private func json(_ reports: [ConformanceReport]) throws -> String {
        try ConformanceDocument(machine: .current, seed: options.seed, randomizedOperations: options.randomizedOperations, reports: reports)
            .encoded()
    }
}
