/// Judges a fleet trial's history key by key (``FleetKeyJudge``) and sums what it found.
enum FleetJudge {
    /// The failures kept in words; the rest are counted.
    static let failuresKept = 20

    static func report(_ history: FleetHistory, workload: FleetWorkload, bound: UInt64) -> FleetTrialReport {
        var report = FleetTrialReport()
        report.keys = workload.keys.count
        report.killed = history.killed.count
        var byKey: [String: [FleetHistory.Call]] = [:]
        for call in history.calls.values { byKey[call.key, default: []].append(call) }
        func fail(_ text: String) {
            if report.failures.count < failuresKept { report.failures.append(text) }
        }
        for key in workload.keys {
            let all = byKey[key] ?? []
            let race = all.filter { !$0.isCleanup }.sorted { ($0.earliest ?? .max, $0.id) < ($1.earliest ?? .max, $1.id) }
            let cleanup = all.first { $0.isCleanup }
            report.calls += all.count
            report.failedCalls += all.filter { $0.answer?.isFailure == true }.count
            let hung = all.filter { $0.returned == nil && history.killed[$0.member] == nil }
            if !hung.isEmpty {
                report.hungCalls += hung.count
                fail("\(KeyText.describe(key)): \(hung.count) call(s) of living members never returned")
            }
            let invoked = race.compactMap(\.earliest)
            if let first = invoked.min(), let last = invoked.max(), last - first > UInt64(workload.duration) / 2 {
                report.inconclusiveKeys += 1
                continue
            }
            var wellFormed = true
            for call in race where call.operation == .start || call.operation == .attach {
                if let problem = malformed(history.events[call.id] ?? []) {
                    wellFormed = false
                    fail("\(KeyText.describe(key)): member \(call.member)'s \(call.operation.rawValue) #\(call.id): \(problem)")
                }
            }
            let judge = FleetKeyJudge(calls: race, cleanup: cleanup, events: history.events, killed: history.killed, bound: bound)
            guard let finding = judge.judge() else {
                report.failedKeys += 1
                let calls = race.map { "\(judge.describe($0)) → \($0.answer?.text ?? "no answer")" }.joined(separator: ", ")
                fail("\(KeyText.describe(key)): no order of the calls explains their answers: \(calls)")
                continue
            }
            if !finding.violations.isEmpty || !wellFormed { report.failedKeys += 1 }
            for violation in finding.violations.prefix(2) { fail(violation) }
            report.finishesOwed += finding.owed
            report.finishesHeard += finding.heard
            report.finishesLost += finding.lost
            report.finishesEarly += finding.early
            report.finishedTwice += finding.doubled
            report.staleTicks += finding.stale
            report.latestTickAfterEndMs = max(report.latestTickAfterEndMs, Double(finding.latestAfterEnd) / 1e6)
        }
        for (member, held) in history.held.sorted(by: { $0.key < $1.key }) where !held.isEmpty {
            report.observersHeld += held.count
            if held == [-1] {
                fail("member \(member) never answered its census")
                continue
            }
            // Each held observer with its key's calls, in the order they began: what let it be kept.
            for id in held.prefix(3) {
                guard let call = history.calls[id] else { continue }
                let calls = (byKey[call.key] ?? []).sorted { ($0.earliest ?? .max) < ($1.earliest ?? .max) }
                    .map { "m\($0.member) \($0.operation.rawValue) #\($0.id) → \($0.answer?.text ?? "no answer")" }
                let heard = (history.events[id] ?? []).map { $0.kind == .finished ? "finish" : "tick \($0.remaining / 1_000_000) ms" }
                fail("member \(member) still held the observer of its \(call.operation.rawValue) #\(id) of \(KeyText.describe(call.key)) when everything had ended; the key's calls: \(calls.joined(separator: ", ")); it heard \(heard.joined(separator: ", "))")
            }
        }
        return report
    }

    /// What every observer's events obey, whatever happened around it: ticks positive and never
    /// rising, at most one finish, nothing after it.
    static func malformed(_ events: [FleetHistory.Event]) -> String? {
        var previous: Int64?
        var finished = false
        for event in events {
            if finished { return "an event after the finish" }
            switch event.kind {
            case .tick:
                if event.remaining <= 0 { return "a tick carries \(event.remaining) ns" }
                if let previous, event.remaining > previous { return "remaining rose from \(previous) to \(event.remaining) ns" }
                previous = event.remaining
            case .finished:
                if event.remaining != 0 { return "the finish carries \(event.remaining) ns" }
                finished = true
            }
        }
        return nil
    }
}
