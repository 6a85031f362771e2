import CountdownSupport
import Countdown
import Foundation

/// `countdown-bench suspend`: each backend's countdowns in a child process that is really
/// frozen (SIGSTOP) and continued (SIGCONT), as iOS suspends a backgrounded app.
struct SuspendCommand {
    static let usage = """
        USAGE: countdown-bench suspend [--backend NAMES] [--freeze DURATION] [--keys N] [--jobs N]
                                       [--format text|json] [--output DIR] [--no-progress]

        For each backend, starts a worker process (countdown-bench worker) running N countdowns of
        2 s ticking every 200 ms, freezes it with SIGSTOP 500 ms in, continues it with SIGCONT,
        and reports: finish error against the original deadline; the remaining time the first
        tick after the freeze showed against the true remaining; ticks in a burst after the
        freeze; finishes lost or doubled; and whether that is what the backend declares.
        Freezes: shorter than a tick (100 ms), several ticks (650 ms), longer than the remaining
        time (2 s), and several ticks while the countdowns are paused. Then with lifecycle
        notifications: the worker told `background` before the freeze and `foreground` after it,
        as UIKit tells an app (650 ms and 2 s). Then killed and relaunched: the worker keeps its
        countdowns in a CountdownStore, is killed with SIGKILL (twice at random points; once in
        the middle of a store write; once relaunched only after the deadline) and relaunched from
        the store each time; a countdown whose deadline passed while no worker ran is judged from
        the restore. Then, where libfaketime is installed (apt-get install faketime), the worker's
        wall clock set 1 h forward mid-countdown, and two kills with the relaunches under a clock
        set 1 h forward (the machine's clock is not touched; less than 1 h on a machine up for
        less than that, and never back: libfaketime arms monotonic timers its offset earlier).

        OPTIONS:
          --backend NAMES     Comma list of \(CountdownBackend.names.joined(separator: ", ")), or all (default).
          --freeze DURATION   One freeze length instead of the three (the paused and the lifecycle
                              runs use it too); no kills.
          --keys N            Countdowns per worker (default 4).
          --jobs N            Experiments run side by side, each its own worker (default 1; at
                              most 16): the workers sleep through their freezes, so a few at a
                              time finish sooner, but beside each other they share the machine.
          --format text|json  What stdout gets.
          --output DIR        Also write DIR/suspend.txt and DIR/suspend.json (release builds only).
                              {machine} in DIR becomes this machine's folder name: results/{machine}.
          --no-progress       No progress on stderr.

        EXIT STATUS: 0 every backend behaved as it declares; 3 one did not; 1 an error; 2 bad arguments.
        """

    static let tick = Duration.milliseconds(200)
    static let duration = Duration.seconds(2)
    static let freezeAfterMs = 500.0

    let backends: [CountdownBackend]
    let scenarios: [SuspendExperiment.Scenario]
    let keys: Int
    let jobs: Int
    let format: String
    let outputDirectory: String?
    let showProgress: Bool
    let showHelp: Bool

    init(arguments: [String]) throws(UsageError) {
        var args = Arguments(arguments, subcommand: "suspend")
        showHelp = args.flag("-h", "--help")
        showProgress = !args.flag("--no-progress")
        backends = try CountdownBackend.selectMeasured(try args.value("--backend") ?? "all", for: "suspend")
        let freeze = try args.duration("--freeze")
        if let freeze, freeze > .seconds(60) { throw UsageError("--freeze must be at most 60s") }
        keys = try args.wholeNumber("--keys", in: 1...1000) ?? 4
        jobs = try args.wholeNumber("--jobs", in: 1...16) ?? 1
        format = try args.choice("--format", in: ["text", "json"]) ?? "text"
        outputDirectory = try args.value("--output").map(Machine.expand)
        try args.finish()
        if outputDirectory != nil, !Machine.isReleaseBuild {
            throw UsageError("--output writes results, which come from a release build: swift run -c release countdown-bench …")
        }
        let after = Self.freezeAfterMs
        if let freeze {
            let ms = freeze.seconds * 1000
            scenarios = [
                .init(name: "\(ReportFormat.milliseconds(ms)) freeze", freezeAfterMs: after, freezeMs: ms, pausedResumeAfterMs: nil),
                .init(name: "\(ReportFormat.milliseconds(ms)) freeze, paused", freezeAfterMs: after, freezeMs: ms, pausedResumeAfterMs: 200),
                .init(name: "\(ReportFormat.milliseconds(ms)) freeze, lifecycle notified", freezeAfterMs: after, freezeMs: ms,
                      pausedResumeAfterMs: nil, notifiesLifecycle: true),
            ]
        } else {
            scenarios = Self.defaultScenarios + Self.lifecycleScenarios + Self.killScenarios
                + (FakeTime.library != nil ? FakeTime.jump().map(Self.clockScenarios) ?? [] : [])
        }
    }

    static let defaultScenarios: [SuspendExperiment.Scenario] = [
        .init(name: "shorter than a tick (100 ms)", freezeAfterMs: freezeAfterMs, freezeMs: 100, pausedResumeAfterMs: nil),
        .init(name: "several ticks (650 ms)", freezeAfterMs: freezeAfterMs, freezeMs: 650, pausedResumeAfterMs: nil),
        .init(name: "longer than the remaining (2 s)", freezeAfterMs: freezeAfterMs, freezeMs: 2000, pausedResumeAfterMs: nil),
        .init(name: "650 ms while paused", freezeAfterMs: freezeAfterMs, freezeMs: 650, pausedResumeAfterMs: 200),
    ]

    /// The second article's fix: the app told `background` before the freeze and `foreground`
    /// after it, as UIKit's notifications tell it.
    static let lifecycleScenarios: [SuspendExperiment.Scenario] = [
        .init(name: "650 ms, lifecycle notified", freezeAfterMs: freezeAfterMs, freezeMs: 650, pausedResumeAfterMs: nil, notifiesLifecycle: true),
        .init(name: "2 s, lifecycle notified", freezeAfterMs: freezeAfterMs, freezeMs: 2000, pausedResumeAfterMs: nil, notifiesLifecycle: true),
    ]

    /// Killed with SIGKILL and relaunched from the worker's `CountdownStore`.
    static let killScenarios: [SuspendExperiment.Scenario] = [
        .init(name: "killed twice, relaunched", freezeAfterMs: 0, freezeMs: 0, pausedResumeAfterMs: nil, kill: .atRandomPoints),
        .init(name: "killed mid-write, relaunched", freezeAfterMs: 0, freezeMs: 0, pausedResumeAfterMs: nil, kill: .duringWrite),
        .init(name: "killed, relaunched after the deadline", freezeAfterMs: 0, freezeMs: 0, pausedResumeAfterMs: nil,
              kill: .relaunchedAfterDeadline),
    ]

    /// Made with libfaketime in the worker only; skipped, and said so, where it is missing or
    /// the machine booted minutes ago. Forward only, and by less than the time since boot (see
    /// ``FakeTime``): otherwise libfaketime holds back libdispatch's and CFRunLoop's *monotonic*
    /// timers, which a real clock change does not do, and the rows would measure libfaketime.
    /// Setting the clock back is covered in-process by the conformance check profile.wall-clock.
    static func clockScenarios(jump: Duration) -> [SuspendExperiment.Scenario] {
        let seconds = jump.seconds, text = FakeTime.text(jump)
        return [
            .init(name: "wall clock \(text) (faketime)", freezeAfterMs: freezeAfterMs, freezeMs: 0, pausedResumeAfterMs: nil,
                  clockJumpSeconds: seconds),
            .init(name: "killed twice, relaunched at \(text) (faketime)", freezeAfterMs: 0, freezeMs: 0, pausedResumeAfterMs: nil,
                  clockJumpSeconds: seconds, kill: .atRandomPoints),
        ]
    }

    /// Why the wall-clock rows cannot be made here, or nil when they can.
    static var clockScenariosMissing: String? {
        FakeTime.library == nil ? FakeTime.missing : FakeTime.jump() == nil ? FakeTime.tooSoonAfterBoot : nil
    }

    func run(_ output: inout StandardStreams) throws -> Int32 {
        if showHelp {
            output.write(Self.usage + "\n")
            return 0
        }
        let progress = Progress(enabled: showProgress)
        if let missing = Self.clockScenariosMissing { progress.note("\(missing); no wall-clock rows") }
        let experiments = backends.flatMap { backend in
            scenarios.map { SuspendExperiment(backend: backend, scenario: $0, keys: keys, tick: Self.tick, duration: Self.duration) }
        }
        let results = try ExperimentPool.run(experiments, jobs: jobs, progress: progress)
        progress.finish()
        let text = Self.text(results), json = try Self.json(results)
        output.write(format == "json" ? json : text)
        if let directory = outputDirectory {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try ("countdown-bench suspend — \(Machine.current.summary)\n\n" + text)
                .write(toFile: "\(directory)/suspend.txt", atomically: true, encoding: .utf8)
            try json.write(toFile: "\(directory)/suspend.json", atomically: true, encoding: .utf8)
            progress.note("wrote \(directory)/suspend.txt and .json")
        }
        return results.allSatisfy(\.asDeclared) ? 0 : 3
    }

    static func text(_ results: [SuspendExperiment.Result]) -> String {
        var table = TextTable(columns: [
            "backend", "freeze", "finish error", "first tick: shown − true", "burst", "lost/doubled", "as declared", "what happened",
        ])
        func range(_ values: [Double]) -> String {
            guard let low = values.min(), let high = values.max() else { return "—" }
            let f = { (v: Double) in String(format: "%+.0f", v) }
            return low == high || abs(high - low) < 1 ? "\(f(low)) ms" : "\(f(low))…\(f(high)) ms"
        }
        for r in results {
            table.add([
                r.backend, r.scenario.name, range(r.finishErrorsMs), range(r.firstTickErrorsMs), r.burstTicks.map(String.init) ?? "—",
                "\(r.lostFinishes)/\(r.doubledFinishes)", r.asDeclared ? "yes" : "NO", r.verdict,
            ])
        }
        return "tick \(tick.text), countdowns of \(duration.text), frozen (or the wall clock moved) \(Int(freezeAfterMs)) ms after the start; "
            + "finish error against start + duration (moved by the pause, when paused); a killed worker's countdowns against the first "
            + "process's start + duration, and their first tick is the one after the last relaunch\n\n" + table.render()
    }

    static func json(_ results: [SuspendExperiment.Result]) throws -> String {
        try SuspendDocument(machine: .current, tickMs: tick.seconds * 1000, durationMs: duration.seconds * 1000, results: results)
            .encoded()
    }
}
