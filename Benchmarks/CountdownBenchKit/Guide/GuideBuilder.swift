/// Answers the guide's questions from the result files: one reading per machine, question and
/// backend, in words with the figure it rests on, or none where nothing was measured. Nothing
/// here is typed by hand but the questions; every figure comes from a file.
struct GuideBuilder {
    let library: ResultsLibrary

    /// The backends, in the order the README recommends them.
    static let columns = [
        "timestamp(continuous)", "timestamp(continuous~10ms)", "timestamp(wall)", "task", "dispatch-source",
        "dispatch-source(compensated)", "run-loop", "operation-queue",
    ]

    // The runs the questions read, by their path in a machine's folder (the README's
    // regeneration commands write them).
    static let defaultRun = "run.json"
    static let tickSecond = "tick-1s/run.json"
    static let tickSecondTask = "tick-1s-task/run.json"
    static let million = "tick-1s-1m/run.json"
    static let tenMillion = "tick-10s-10m/run.json"
    static let sharedPool = "shared-pool/run.json"
    static let store = "store/run.json"

    func build() -> Guide {
        var guide = Guide(
            machines: machineEntries,
            columns: Self.columns, rows: rows, statements: statements)
        guide.fleetStatements = FleetGuide(library: library).statements
        return guide
    }

    /// Each machine as the guides name it: its folder, and what its files recorded of it.
    var machineEntries: [Guide.MachineEntry] {
        library.machines.map { machine in
            .init(folder: machine.folder, summary: Self.summary(machine.machine) + Self.memory(machine.runs.values.compactMap(\.memory)))
        }
    }

    static func summary(_ machine: Machine?) -> String {
        guard let m = machine else { return "machine not recorded" }
        return "\(m.cpuModel), \(m.cores) cores, Swift \(m.swiftVersion), \(m.buildConfiguration) build"
    }

    /// What a dependent memory load took while the folder's runs were measured: a neighbour that
    /// thrashes the host's cache moves every figure at large N, and shows here first.
    static func memory(_ measured: [MemoryLatency]) -> String {
        MemoryText.range(measured).map { "; a dependent memory load took \($0) while its runs were measured" } ?? ""
    }

    // MARK: - The table

    var rows: [Guide.Row] {
        [
            row("p99 tick lateness, N = 1 000, 10 ms ticks (100 000 events/s)") { m, backend in
                config(m, Self.defaultRun, backend, 1000).map(latencyAndCPU)
            },
            row("p99 tick lateness, N = 10 000, 10 ms ticks (1 000 000 events/s)") { m, backend in
                config(m, Self.defaultRun, backend, 10000).map(latencyAndCPU)
            },
            row("where it stops keeping up, 10 ms ticks (p99 within a 60 Hz frame, every countdown finished)") { m, backend in
                keepsUp(m, backend)
            },
            row("p99 tick lateness, N = 100 000, 1 s ticks") { m, backend in
                tickSecond(m, backend, 100_000).map { c in latency(c, .tickP99) }
            },
            row("CPU per delivered event, N = 100 000, 1 s ticks") { m, backend in
                tickSecond(m, backend, 100_000).map { c in
                    c.with(Self.figure(c.configuration, .cpuPerEvent) + " at " + Self.figure(c.configuration, .cpu) + " of a core",
                           magnitude: Self.magnitude(c.configuration, .cpuPerEvent))
                }
            },
            row("N = 1 000 000, 1 s ticks, starts spread over a tick, alone in its process") { m, backend in
                let file = backend == "task" ? Self.tickSecondTask : Self.million
                return config(m, file, backend, 1_000_000).map { c in
                    c.with(Self.outcome(c.configuration) + "; p99 " + Self.percentile(c.configuration, .tickP99)
                           + "; " + Self.figure(c.configuration, .cpu) + " of a core, " + Self.figure(c.configuration, .cpuPerEvent) + " a delivered event",
                           magnitude: nil)
                }
            },
            // The same run's other half: one thread starting a million as fast as it can, the
            // case where the starts themselves must fit in the time limit.
            row("N = 1 000 000, 1 s ticks, all started at once, alone in its process") { m, backend in
                let file = backend == "task" ? Self.tickSecondTask : Self.million
                return config(m, file, backend, 1_000_000, .burst).map { c in
                    c.with(Self.outcome(c.configuration) + "; p99 " + Self.percentile(c.configuration, .tickP99), magnitude: nil)
                }
            },
            // Ten million: a million events a second while they run, a million finishes a second
            // at the end, and the starts themselves about a tick long.
            row("N = 10 000 000, 10 s ticks, 30 s countdowns, starts spread over a tick, alone in its process") { m, backend in
                config(m, Self.tenMillion, backend, 10_000_000).map { c in
                    var text = Self.outcome(c.configuration) + "; p99 " + Self.percentile(c.configuration, .tickP99)
                        + "; " + Self.figure(c.configuration, .cpuPerEvent) + " a delivered event, "
                        + Self.figure(c.configuration, .rss) + " a countdown"
                    if let longest = c.configuration.repeats.map(\.counts.startPhaseMs).max() {
                        text += "; the starts took " + ReportFormat.milliseconds(longest)
                    }
                    return c.with(text, magnitude: nil)
                }
            },
            row("N = 1 000 000, 1 s ticks, after the other backends in one process") { m, backend in
                config(m, Self.tickSecond, backend, 1_000_000).map { c in
                    c.with(Self.outcome(c.configuration) + "; p99 " + Self.figure(c.configuration, .tickP99), magnitude: nil)
                }
            },
            row("`start` / `cancel` median, 1 000 000 active") { m, backend in
                tickSecond(m, backend, 1_000_000).map { c in
                    var text = Self.figure(c.configuration, .startCall) + " / " + Self.figure(c.configuration, .cancelCall)
                    // Swift's own hash table with the same keys, in the same minute.
                    if c.configuration[.startFloor] != nil, c.configuration[.cancelFloor] != nil {
                        text += " (a `Dictionary`'s insert / remove: " + Self.figure(c.configuration, .startFloor) + " / "
                            + Self.figure(c.configuration, .cancelFloor) + ")"
                    }
                    return c.with(text, magnitude: nil)
                }
            },
            row("memory per countdown, 1 000 000 active") { m, backend in
                tickSecond(m, backend, 1_000_000).map { c in
                    c.with(Self.figure(c.configuration, .rss), magnitude: Self.magnitude(c.configuration, .rss))
                }
            },
            row("beside 20 sleeping operation-queue workers in the process, N = 100, 100 ms ticks, 30 s countdowns") { m, backend in
                besideSleepers(m, backend)
            },
            row("process frozen 650 ms (SIGSTOP)") { m, backend in
                freeze(m, backend) { $0.freezeMs == 650 && $0.pausedResumeAfterMs == nil && $0.notifiesLifecycle != true }
            },
            row("process frozen 2 s, longer than the time left") { m, backend in
                freeze(m, backend) { $0.freezeMs == 2000 && $0.pausedResumeAfterMs == nil && $0.notifiesLifecycle != true }
            },
            row("frozen 650 ms, told `background` before and `foreground` after (lifecycle notifications)") { m, backend in
                freeze(m, backend) { $0.freezeMs == 650 && $0.notifiesLifecycle == true }
            },
            row("frozen 2 s, lifecycle notifications") { m, backend in
                freeze(m, backend) { $0.freezeMs == 2000 && $0.notifiesLifecycle == true }
            },
            row("killed (SIGKILL) and relaunched from a `CountdownStore`: at random points, mid-write, after the deadline, under a wall clock set forward") { m, backend in
                kills(m, backend)
            },
            row("keeping a `CountdownStore`, N = 10 000 countdowns of 3 s at 1 s ticks (against none)") { m, backend in
                store(m, backend, count: 10000)
            },
            row("wall clock set forward in a real process (libfaketime)") { m, backend in
                wallClockJump(m, backend)
            },
            row("wall clock set 1 h forward, injected clock (conformance, profile.wall-clock)") { m, backend in
                check(m, backend, "profile.wall-clock") { $0 }
            },
            row("drift: how far the ticks' grid strays from start + k·T at each tick (conformance, profile.drift)") { m, backend in
                check(m, backend, "profile.drift", Self.driftPerTick)
            },
        ]
    }

    // MARK: - Statements for the prose

    var statements: [Guide.Statement] {
        [
            statement("`timestamp(continuous)` against `dispatch-source`, one tick a second, N = 100 000") { m in
                versus(m, ("timestamp(continuous)", Self.tickSecond), ("dispatch-source", Self.tickSecond), count: 100_000)
            },
            statement("`timestamp(continuous~10ms)` (a 10 ms tolerance) against `timestamp(continuous)`, one tick a second, N = 10 000") { m in
                versus(m, ("timestamp(continuous~10ms)", Self.tickSecond), ("timestamp(continuous)", Self.tickSecond), count: 10000)
            },
            statement("the same at N = 100 000") { m in
                versus(m, ("timestamp(continuous~10ms)", Self.tickSecond), ("timestamp(continuous)", Self.tickSecond), count: 100_000)
            },
            statement("`task` against `timestamp(continuous)`, one tick a second, N = 100 000") { m in
                versus(m, ("task", Self.tickSecondTask), ("timestamp(continuous)", Self.tickSecond), count: 100_000)
            },
            statement("`run-loop` against `timestamp(continuous)`, one tick a second, N = 10 000") { m in
                versus(m, ("run-loop", Self.tickSecond), ("timestamp(continuous)", Self.tickSecond), count: 10000)
            },
            statement("a `CountdownStore`'s cost as N grows (`timestamp(continuous)`, countdowns of 3 s at 1 s ticks)") { m in
                storeGrowth(m)
            },
        ]
    }

    // MARK: - Answers

    /// A configuration found in a machine's file, with what a reading of it needs.
    struct Found {
        let machine: String
        let file: String
        let configuration: RunDocument.Configuration

        func with(_ text: String, magnitude: Guide.Magnitude?) -> Guide.Reading {
            Guide.Reading(machine: machine, text: text, magnitude: magnitude, files: ["\(machine)/\(file)"])
        }
    }

    private func row(_ title: String, _ answer: (MachineResults, String) -> Guide.Reading?) -> Guide.Row {
        Guide.Row(title: title, cells: Self.columns.map { backend in
            Guide.Cell(readings: library.machines.compactMap { answer($0, backend) })
        })
    }

    private func statement(_ title: String, _ answer: (MachineResults) -> Guide.Reading?) -> Guide.Statement {
        Guide.Statement(title: title, cell: Guide.Cell(readings: library.machines.compactMap(answer)))
    }

    func config(_ m: MachineResults, _ file: String, _ backend: String, _ count: Int, _ starts: StartPattern = .spread) -> Found? {
        guard let c = m.runs[file]?.configurations.first(where: { $0.backend == backend && $0.count == count && $0.starts == starts })
        else { return nil }
        return Found(machine: m.folder, file: file, configuration: c)
    }

    /// The one-tick-a-second run: `task` has a process of its own.
    private func tickSecond(_ m: MachineResults, _ backend: String, _ count: Int) -> Found? {
        config(m, backend == "task" ? Self.tickSecondTask : Self.tickSecond, backend, count)
    }

    private func latency(_ c: Found, _ figure: Figure) -> Guide.Reading {
        c.with(Self.percentile(c.configuration, figure) + Self.unlessComplete(c.configuration), magnitude: Self.magnitude(c.configuration, figure))
    }

    private func latencyAndCPU(_ c: Found) -> Guide.Reading {
        c.with(Self.percentile(c.configuration, .tickP99) + " at " + Self.figure(c.configuration, .cpu) + " CPU" + Self.unlessComplete(c.configuration),
               magnitude: Self.magnitude(c.configuration, .tickP99))
    }

    private func keepsUp(_ m: MachineResults, _ backend: String) -> Guide.Reading? {
        guard let run = m.runs[Self.defaultRun], let found = KeepsUp(backend, in: run) else { return nil }
        func why(_ c: RunDocument.Configuration) -> String {
            c.outcome.isComplete ? "p99 \(Self.figure(c, .tickP99)) at \(Self.figure(c, .cpu)) CPU" : Self.outcome(c)
        }
        let text: String
        switch (found.best, found.next) {
        case (let best?, nil): text = "kept up to N = \(ReportFormat.count(best.count)), the largest N run"
        case (let best?, let next?): text = "kept up to N = \(ReportFormat.count(best.count)), not at \(ReportFormat.count(next.count)): \(why(next))"
        case (nil, let next?): text = "not even at N = \(ReportFormat.count(next.count)): \(why(next))"
        case (nil, nil): return nil
        }
        return Guide.Reading(machine: m.folder, text: text, magnitude: nil, files: ["\(m.folder)/\(Self.defaultRun)"])
    }

    /// `task` and `timestamp(continuous)` beside sleeping workers, against themselves alone.
    private func besideSleepers(_ m: MachineResults, _ backend: String) -> Guide.Reading? {
        let companied = backend == "task" ? "task(beside-20-sleepers)" : "\(backend.dropLast())+beside-20-sleepers)"
        guard let with = config(m, Self.sharedPool, companied, 100) else { return nil }
        let c = with.configuration
        let skipped = c.outcome.skippedTicks, delivered = c[.tickP99]?.samples ?? 0
        var text = skipped == 0
            ? "no tick skipped"
            : "\(ReportFormat.count(skipped)) of \(ReportFormat.count(skipped + delivered)) ticks skipped (\(ReportFormat.percent(100 * Double(skipped) / Double(skipped + delivered))))"
        text += "; p99 \(Self.percentile(c, .tickP99))"
        if let alone = config(m, Self.sharedPool, backend, 100) {
            text += "; alone: p99 \(Self.figure(alone.configuration, .tickP99)), \(alone.configuration.outcome.skippedTicks == 0 ? "none skipped" : "\(ReportFormat.count(alone.configuration.outcome.skippedTicks)) skipped")"
        }
        text += "; pool wait p99 \(Self.figure(c, .poolWait)); finish p99 \(Self.figure(c, .finishP99))" + Self.unlessComplete(c, skipped: false)
        return with.with(text, magnitude: nil)
    }

    private func suspendResults(_ m: MachineResults, _ backend: String) -> [SuspendExperiment.Result] {
        m.suspend?.results.filter { $0.backend == backend } ?? []
    }

    private func suspendReading(_ m: MachineResults, _ text: String, magnitude: Guide.Magnitude? = nil) -> Guide.Reading {
        Guide.Reading(machine: m.folder, text: text, magnitude: magnitude, files: ["\(m.folder)/\(MachineResults.suspendFile)"])
    }

    private func freeze(_ m: MachineResults, _ backend: String, _ matches: (SuspendExperiment.Scenario) -> Bool) -> Guide.Reading? {
        guard let r = suspendResults(m, backend).first(where: { $0.scenario.kill == nil && $0.scenario.clockJumpSeconds == nil && matches($0.scenario) })
        else { return nil }
        var parts = [Self.finished(r.finishErrorsMs, against: "its deadline")]
        if let after = r.finishAfterContinueMs.max(), let deadline = r.finishErrorsMs.min(), deadline > 0, after < deadline {
            parts.append("\(ReportFormat.milliseconds(after)) after the continue")
        }
        if let low = r.firstTickErrorsMs.min(), let high = r.firstTickErrorsMs.max() {
            parts.append(high < 1 && low > -1
                ? "its first tick after the freeze showed the true time"
                : "its first tick after the freeze showed \(Self.range(low, high)) more than was left")
        }
        if let burst = r.burstTicks {
            parts.append(burst == 0 ? "no tick after the continue" : burst == 1 ? "1 catch-up tick" : "\(burst) ticks in a burst")
        }
        parts += Self.losses(lost: r.lostFinishes, doubled: r.doubledFinishes, asDeclared: r.asDeclared)
        return suspendReading(m, parts.joined(separator: "; "), magnitude: r.finishErrorsMs.max().map { .init(value: $0, unit: .milliseconds) })
    }

    private func kills(_ m: MachineResults, _ backend: String) -> Guide.Reading? {
        let runs = suspendResults(m, backend).filter { $0.scenario.kill != nil }
        guard !runs.isEmpty else { return nil }
        let onTime = runs.filter { $0.scenario.kill != .relaunchedAfterDeadline }
        let kills = runs.reduce(0) { $0 + ($1.killsAtMs?.count ?? 0) }
        var parts = ["\(runs.count) runs, \(kills) kills: \(runs.reduce(0) { $0 + $1.lostFinishes }) lost, \(runs.reduce(0) { $0 + $1.doubledFinishes }) doubled"]
        let errors = onTime.flatMap(\.finishErrorsMs)
        if !errors.isEmpty { parts.append(Self.finished(errors, against: "the original deadline")) }
        let restores = onTime.flatMap { $0.relaunchesMs ?? [] }
        if let low = restores.min(), let high = restores.max() { parts.append("restored \(Self.range(low, high)) after a kill") }
        for late in runs where late.scenario.kill == .relaunchedAfterDeadline {
            parts.append("relaunched after the deadline: \(late.deadlinesWhileDead ?? 0) of \(late.keys) reported expired at the restore")
        }
        if let longest = runs.compactMap(\.longestStoreWriteMs).max() { parts.append("longest store write \(ReportFormat.milliseconds(longest))") }
        let wrong = runs.filter { !$0.asDeclared }.count
        if wrong > 0 { parts.append("\(wrong) run(s) NOT as declared") }
        return suspendReading(m, parts.joined(separator: "; "), magnitude: errors.max().map { .init(value: $0, unit: .milliseconds) })
    }

    private func wallClockJump(_ m: MachineResults, _ backend: String) -> Guide.Reading? {
        guard let r = suspendResults(m, backend).first(where: { $0.scenario.kill == nil && $0.scenario.clockJumpSeconds != nil }),
              let jump = r.scenario.clockJumpSeconds
        else { return nil }
        let early = (r.finishErrorsMs.min() ?? 0) < -1
        let verdict = early ? "moved" : "not moved"
        let text = "set \(FakeTime.text(.seconds(jump))) mid-countdown: \(verdict), \(Self.finished(r.finishErrorsMs, against: "its deadline"))"
            + Self.losses(lost: r.lostFinishes, doubled: r.doubledFinishes, asDeclared: r.asDeclared).map { "; " + $0 }.joined()
        return suspendReading(m, text, magnitude: r.finishErrorsMs.min().map { .init(value: $0, unit: .milliseconds) })
    }

    private func store(_ m: MachineResults, _ backend: String, count: Int) -> Guide.Reading? {
        guard let with = config(m, Self.store, "\(backend.dropLast())+store)", count),
              let without = config(m, Self.store, backend, count)
        else { return nil }
        let a = with.configuration, b = without.configuration
        let text = "`start` \(Self.figure(a, .startCall)) (\(Self.figure(b, .startCall)) without); "
            + "finish p99 \(Self.figure(a, .finishP99)) (\(Self.figure(b, .finishP99)) without); "
            + "\(Self.figure(a, .cpu)) of a core (\(Self.figure(b, .cpu)) without)" + Self.unlessComplete(a)
        return with.with(text, magnitude: Self.magnitude(a, .finishP99))
    }

    private func check(_ m: MachineResults, _ backend: String, _ id: String, _ words: (String) -> String) -> Guide.Reading? {
        guard let result = m.conformance?.result(id, of: backend) else { return nil }
        var text = result.figure.map(words) ?? "no figure"
        if result.verdict != .pass { text += " (\(result.verdict == .fail ? "FAIL" : result.verdict.rawValue))" }
        return Guide.Reading(
            machine: m.folder, text: text, magnitude: nil, files: ["\(m.folder)/\(MachineResults.conformanceFile)"])
    }

    /// "the ticks drift -0.2 µs per tick from start + k·T (…)" → "−0.2 µs a tick".
    static func driftPerTick(_ figure: String) -> String {
        guard let range = figure.range(of: "drift "), let end = figure.range(of: " µs per tick", range: range.upperBound..<figure.endIndex),
              let value = Double(figure[range.upperBound..<end.lowerBound])
        else { return figure }
        return String(format: "%.1f µs a tick", value).replacingOccurrences(of: "-", with: "−")
    }

    /// One backend against another at the same N: CPU per event, p99, memory per countdown.
    private func versus(_ m: MachineResults, _ one: (String, String), _ other: (String, String), count: Int) -> Guide.Reading? {
        guard let a = config(m, one.1, one.0, count), let b = config(m, other.1, other.0, count) else { return nil }
        let x = a.configuration, y = b.configuration
        var parts: [String] = []
        if let p = x[.cpuPerEvent]?.value, let q = y[.cpuPerEvent]?.value, q > 0 {
            parts.append("\(Self.figure(x, .cpuPerEvent)) of CPU per event against \(Self.figure(y, .cpuPerEvent)) (\(Self.ratio(p, q)))")
        }
        parts.append("\(Self.figure(x, .cpu)) of a core against \(Self.figure(y, .cpu))")
        parts.append("p99 \(Self.figure(x, .tickP99)) against \(Self.figure(y, .tickP99))")
        if let p = x[.rss]?.value, let q = y[.rss]?.value, q > 0 {
            parts.append("\(Self.figure(x, .rss)) a countdown against \(Self.figure(y, .rss)) (\(Self.ratio(p, q)))")
        }
        let files = Array(Set(["\(m.folder)/\(a.file)", "\(m.folder)/\(b.file)"])).sorted()
        let magnitude = x[.cpuPerEvent].flatMap { p in y[.cpuPerEvent].map { Guide.Magnitude(value: p.value / $0.value, unit: .ratio) } }
        return Guide.Reading(machine: m.folder, text: parts.joined(separator: "; ") + Self.unlessComplete(x) + Self.unlessComplete(y),
                             magnitude: magnitude, files: files)
    }

    private func storeGrowth(_ m: MachineResults) -> Guide.Reading? {
        guard let run = m.runs[Self.store] else { return nil }
        let counts = Set(run.configurations.map(\.count)).sorted()
        var parts: [String] = []
        for n in counts {
            guard let with = config(m, Self.store, "timestamp(continuous+store)", n)?.configuration,
                  let without = config(m, Self.store, "timestamp(continuous)", n)?.configuration
            else { continue }
            parts.append("N = \(ReportFormat.count(n)): finish p99 \(Self.figure(with, .finishP99)) against \(Self.figure(without, .finishP99)), "
                + "\(Self.figure(with, .cpu)) of a core against \(Self.figure(without, .cpu)), `start` \(Self.figure(with, .startCall)) against \(Self.figure(without, .startCall)), `cancel` \(Self.figure(with, .cancelCall)) against \(Self.figure(without, .cancelCall))")
        }
        guard !parts.isEmpty else { return nil }
        return Guide.Reading(machine: m.folder, text: parts.joined(separator: "; "), magnitude: nil, files: ["\(m.folder)/\(Self.store)"])
    }

    // MARK: - Words

    /// A figure as the run's tables write it ("—" when the file has none), but a call's time
    /// in the unit that keeps it short: "430 ns", "5.21 ms".
    static func figure(_ c: RunDocument.Configuration, _ figure: Figure) -> String {
        guard figure.unit == .microseconds, figure != .cpuPerEvent, let v = c[figure], v.isResolved else {
            return ReportFormat.figure(figure, c[figure])
        }
        return (v.isLowerBound ? "≥ " : "") + ReportFormat.milliseconds(v.value / 1000)
    }

    /// A percentile with its repeats' range and its samples: "95.7 µs (repeats 79.4 µs–105 µs;
    /// 297 000 ticks)".
    static func percentile(_ c: RunDocument.Configuration, _ figure: Figure) -> String {
        guard let v = c[figure] else { return "—" }
        var text = ReportFormat.figure(figure, v)
        var notes: [String] = []
        if v.isResolved, let r = v.repeats, r.min != r.max {
            notes.append("repeats \(ReportFormat.value(r.min, figure.unit))–\(ReportFormat.value(r.max, figure.unit))")
        }
        notes.append("\(ReportFormat.count(v.samples)) \(figure == .tickP99 || figure == .tickP50 ? "ticks" : "samples")")
        text += " (" + notes.joined(separator: "; ") + ")"
        return text
    }

    /// The figure for a range over machines; nil when it is a lower bound or unresolved.
    static func magnitude(_ c: RunDocument.Configuration, _ figure: Figure) -> Guide.Magnitude? {
        guard let v = c[figure], v.isResolved, !v.isLowerBound else { return nil }
        return .init(value: v.value, unit: figure.unit)
    }

    /// What became of a configuration's countdowns, in words, with every breach of the
    /// contract.
    static func outcome(_ c: RunDocument.Configuration) -> String {
        var text: String
        if let cut = c.outcome.cutOff {
            let worst = c.repeats.count > 1 ? " (the worst of \(c.repeats.count) repeats)" : ""
            text = "cut off at its \(ReportFormat.milliseconds(cut.limitMs)) limit\(worst): \(ReportFormat.count(cut.finished)) of \(ReportFormat.count(cut.countdowns)) finished"
            if cut.notStarted > 0 {
                text += ", \(ReportFormat.count(cut.notStarted)) never started (the starts took \(ReportFormat.milliseconds(cut.startPhaseMs)))"
            }
        } else {
            let repeats = c.repeats.count > 1 ? ", in each of \(c.repeats.count) repeats" : ""
            text = "all \(ReportFormat.count(c.count)) finished\(repeats)"
        }
        return text + rest(c, skipped: true)
    }

    /// Nothing for a configuration that completed without skipping or a breach; else what
    /// happened (its whole outcome when it was cut off).
    static func unlessComplete(_ c: RunDocument.Configuration, skipped: Bool = true) -> String {
        c.outcome.cutOff != nil ? "; " + outcome(c) : rest(c, skipped: skipped)
    }

    /// The skipped ticks and the breaches, each after "; ".
    private static func rest(_ c: RunDocument.Configuration, skipped: Bool) -> String {
        let skips = skipped && c.outcome.skippedTicks > 0 ? ["\(ReportFormat.count(c.outcome.skippedTicks)) ticks skipped to catch up"] : []
        return (skips + OutcomeText.breaches(c.outcome)).map { "; " + $0 }.joined()
    }

    static func losses(lost: Int, doubled: Int, asDeclared: Bool) -> [String] {
        var parts: [String] = []
        if lost > 0 { parts.append("\(lost) finish(es) LOST") }
        if doubled > 0 { parts.append("\(doubled) finish(es) DOUBLED") }
        if !asDeclared { parts.append("NOT as declared") }
        return parts
    }

    /// "finished 400 ms after its deadline", "finished 1.40 s early", over every key.
    static func finished(_ errorsMs: [Double], against deadline: String) -> String {
        guard let low = errorsMs.min(), let high = errorsMs.max() else { return "no finish" }
        if high < 0 { return "finished \(range(-high, -low)) before \(deadline)" }
        if low < 0 { return "finished from \(ReportFormat.milliseconds(-low)) before to \(ReportFormat.milliseconds(high)) after \(deadline)" }
        return "finished \(range(low, high)) after \(deadline)"
    }

    /// One figure when the two are within a millisecond, else "low–high".
    static func range(_ low: Double, _ high: Double) -> String {
        abs(high - low) < 1 || ReportFormat.milliseconds(low) == ReportFormat.milliseconds(high)
            ? ReportFormat.milliseconds(high)
            : "\(ReportFormat.milliseconds(low))–\(ReportFormat.milliseconds(high))"
    }

    /// "3.65×", "2.65× less"; "the same" when the two round to each other.
    static func ratio(_ a: Double, _ b: Double) -> String {
        let up = ReportFormat.significant(a / b), down = ReportFormat.significant(b / a)
        if up == "1.00" || down == "1.00" { return "the same" }
        return a >= b ? "\(up)×" : "\(down)× less"
    }
}
