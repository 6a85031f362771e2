/// The guide's answers, each read from a machine's result files.
extension GuideBuilder {
    func config(_ m: MachineResults, _ file: String, _ backend: String, _ count: Int, _ starts: StartPattern = .spread) -> Found? {
        guard let c = m.runs[file]?.configurations.first(where: { $0.backend == backend && $0.count == count && $0.starts == starts })
        else { return nil }
        return Found(machine: m.folder, file: file, configuration: c)
    }

    /// The one-tick-a-second run: `task` has a process of its own.
    func tickSecond(_ m: MachineResults, _ backend: String, _ count: Int) -> Found? {
        config(m, backend == "task" ? Self.tickSecondTask : Self.tickSecond, backend, count)
    }

    func latency(_ c: Found, _ figure: Figure) -> Guide.Reading {
        c.with(Self.percentile(c.configuration, figure) + Self.unlessComplete(c.configuration), magnitude: Self.magnitude(c.configuration, figure))
    }

    func latencyAndCPU(_ c: Found) -> Guide.Reading {
        c.with(Self.percentile(c.configuration, .tickP99) + " at " + Self.figure(c.configuration, .cpu) + " CPU" + Self.unlessComplete(c.configuration),
               magnitude: Self.magnitude(c.configuration, .tickP99))
    }

    func keepsUp(_ m: MachineResults, _ backend: String) -> Guide.Reading? {
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
    func besideSleepers(_ m: MachineResults, _ backend: String) -> Guide.Reading? {
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

    func suspendResults(_ m: MachineResults, _ backend: String) -> [SuspendExperiment.Result] {
        m.suspend?.results.filter { $0.backend == backend } ?? []
    }

    func suspendReading(_ m: MachineResults, _ text: String, magnitude: Guide.Magnitude? = nil) -> Guide.Reading {
        Guide.Reading(machine: m.folder, text: text, magnitude: magnitude, files: ["\(m.folder)/\(MachineResults.suspendFile)"])
    }

    func freeze(_ m: MachineResults, _ backend: String, _ matches: (SuspendExperiment.Scenario) -> Bool) -> Guide.Reading? {
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

    func kills(_ m: MachineResults, _ backend: String) -> Guide.Reading? {
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

    func wallClockJump(_ m: MachineResults, _ backend: String) -> Guide.Reading? {
        guard let r = suspendResults(m, backend).first(where: { $0.scenario.kill == nil && $0.scenario.clockJumpSeconds != nil }),
              let jump = r.scenario.clockJumpSeconds
        else { return nil }
        let early = (r.finishErrorsMs.min() ?? 0) < -1
        let verdict = early ? "moved" : "not moved"
        let text = "set \(FakeTime.text(.seconds(jump))) mid-countdown: \(verdict), \(Self.finished(r.finishErrorsMs, against: "its deadline"))"
            + Self.losses(lost: r.lostFinishes, doubled: r.doubledFinishes, asDeclared: r.asDeclared).map { "; " + $0 }.joined()
        return suspendReading(m, text, magnitude: r.finishErrorsMs.min().map { .init(value: $0, unit: .milliseconds) })
    }

    func store(_ m: MachineResults, _ backend: String, count: Int) -> Guide.Reading? {
        guard let with = config(m, Self.store, "\(backend.dropLast())+store)", count),
              let without = config(m, Self.store, backend, count)
        else { return nil }
        let a = with.configuration, b = without.configuration
        let text = "`start` \(Self.figure(a, .startCall)) (\(Self.figure(b, .startCall)) without); "
            + "finish p99 \(Self.figure(a, .finishP99)) (\(Self.figure(b, .finishP99)) without); "
            + "\(Self.figure(a, .cpu)) of a core (\(Self.figure(b, .cpu)) without)" + Self.unlessComplete(a)
        return with.with(text, magnitude: Self.magnitude(a, .finishP99))
    }

    func check(_ m: MachineResults, _ backend: String, _ id: String, _ words: (String) -> String) -> Guide.Reading? {
        guard let result = m.conformance?.result(id, of: backend) else { return nil }
        var text = result.figure.map(words) ?? "no figure"
        if result.verdict != .pass { text += " (\(result.verdict == .fail ? "FAIL" : result.verdict.rawValue))" }
        return Guide.Reading(
            machine: m.folder, text: text, magnitude: nil, files: ["\(m.folder)/\(MachineResults.conformanceFile)"])
    }

    /// "the ticks drift -0.2 µs per tick from the first fire + k·T (…)" → "−0.2 µs a tick".
    static func driftPerTick(_ figure: String) -> String {
        guard let range = figure.range(of: "drift "), let end = figure.range(of: " µs per tick", range: range.upperBound..<figure.endIndex),
              let value = Double(figure[range.upperBound..<end.lowerBound])
        else { return figure }
        // A drift that rounds to zero reads 0.0, not −0.0 (printf keeps the sign of −0.04).
        let shown = (value * 10).rounded() / 10
        return String(format: "%.1f µs a tick", shown == 0 ? 0 : shown).replacingOccurrences(of: "-", with: "−")
    }

    /// One backend against another at the same N: CPU per event, p99, memory per countdown.
    func versus(_ m: MachineResults, _ one: (String, String), _ other: (String, String), count: Int) -> Guide.Reading? {
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

    func storeGrowth(_ m: MachineResults) -> Guide.Reading? {
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
}
