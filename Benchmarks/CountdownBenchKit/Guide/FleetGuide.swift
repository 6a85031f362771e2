import Foundation

/// The guide's statements on the Redis strategies, from each machine's `redis/fleet.json` and
/// `redis/conformance.json`: one reading per machine that has them.
struct FleetGuide {
    let library: ResultsLibrary

    var statements: [Guide.Statement] {
        let titles = scaleTitles + [
            "`redis(zset)`, one call at a time beside a `PING`",
            Self.serversTitle, Self.failoverTitle, Self.keyspaceExpiryTitle, Self.zsetExpiryTitle,
        ] + promiseTitles + ["Conformance of the Redis strategies"]
        return titles.map { title in
            Guide.Statement(title: title, cell: Guide.Cell(readings: library.machines.compactMap { reading(title, $0) }))
        }.filter { !$0.cell.readings.isEmpty }
    }

    private static let keyspaceExpiryTitle = "`redis(keyspace)`, 1 000 countdowns due over 1–2 s beside idle keys with a one-hour TTL"
    private static let zsetExpiryTitle = "`redis(zset)`, the same beside the same idle keys"
    private static let serversTitle =
        "`redis(zset)` called as servers call it: C tasks at once on the cooperative pool, each request a start then a cancel, beside a task sleeping 5 ms at a time"

    private static let failoverTitle =
        "A master SIGKILLed under `redis(zset*3)` on a Redis Cluster with a replica per master, without and with starts acknowledged by a replica (`WAIT`)"

    /// One statement per scale row measured on any machine.
    private var scaleTitles: [String] {
        let counts = Set(library.machines.flatMap { $0.fleet?.scale.map(\.countdowns) ?? [] }).sorted()
        return counts.map { "`redis(zset)`, \(Self.count($0)) countdowns of 3 s at 1 s ticks, started pipelined" }
    }

    /// One statement per promise row (a case on a strategy) measured on any machine.
    private var promiseTitles: [String] {
        var seen: [String] = []
        for row in library.machines.flatMap({ $0.fleet?.promises ?? [] }) where !seen.contains(Self.title(row)) {
            seen.append(Self.title(row))
        }
        return seen
    }

    private static func title(_ row: FleetDocument.PromiseRow) -> String {
        "`\(row.strategy)`: \(row.title)" + (row.rounds > 1 ? ", \(row.rounds) rounds" : "")
    }

    private func reading(_ title: String, _ machine: MachineResults) -> Guide.Reading? {
        let fleetFile = "\(machine.folder)/\(MachineResults.fleetFolder)/\(FleetDocument.fileName)"
        if title.hasPrefix("Conformance") {
            guard let document = machine.fleetConformance else { return nil }
            let text = document.reports.map { report -> String in
                let failed = report.results.filter { $0.verdict == .fail }
                let passed = report.results.filter { $0.verdict == .pass }.count
                return failed.isEmpty
                    ? "`\(report.backend)` passes all \(passed) checks that apply"
                    : "`\(report.backend)` fails \(failed.map { "`\($0.id)`" }.joined(separator: ", ")) (\(passed) pass)"
            }.joined(separator: "; ")
            return .init(machine: machine.folder, text: text, magnitude: nil,
                         files: ["\(machine.folder)/\(MachineResults.fleetFolder)/\(MachineResults.conformanceFile)"])
        }
        guard let fleet = machine.fleet else { return nil }
        let text: String
        if let row = fleet.scale.first(where: { title == "`redis(zset)`, \(Self.count($0.countdowns)) countdowns of 3 s at 1 s ticks, started pipelined" }) {
            text = "\(Self.count(row.finished)) of \(Self.count(row.countdowns)) finished, finish p99 \(FleetReport.ms(row.finishP99Ms)) "
                + "(max \(FleetReport.ms(row.finishMaxMs))), started over \(FleetReport.ms(row.startPhaseMs)); "
                + "\(FleetReport.micros(row.cpuPerEventMicros)) of CPU per event here"
                + (row.redisCPUPerEventMicros.map { " and \(FleetReport.micros($0)) in redis-server" } ?? "")
                + (row.redisBytesPerCountdown.map { String(format: "; %.0f B of Redis memory per countdown", $0) } ?? "")
        } else if title.hasPrefix("`redis(zset)`, one call") {
            guard let row = fleet.scale.first else { return nil }
            text = "a start \(FleetReport.micros(row.startMedianMicros)) (\(FleetReport.ratio(row.startMedianMicros, row.pingMedianMicros))), "
                + "a cancel \(FleetReport.micros(row.cancelMedianMicros)) (\(FleetReport.ratio(row.cancelMedianMicros, row.pingMedianMicros))), "
                + "a `PING` \(FleetReport.micros(row.pingMedianMicros)): medians of \(Self.count(row.calls)) calls each"
        } else if title == Self.serversTitle {
            guard let rows = fleet.servers, !rows.isEmpty else { return nil }
            text = ["async", "blocking"].map { api in
                "\(api) calls: " + rows.filter { $0.api == api }.map { row in
                    "C = \(Self.count(row.tasks)): \(Self.count(Int(row.callsPerSecond.rounded()))) calls/s, request p99 \(FleetReport.ms(row.requestP99Ms)), "
                        + "heartbeat late p99 \(FleetReport.ms(row.heartbeatP99Ms)) (max \(FleetReport.ms(row.heartbeatMaxMs)))"
                }.joined(separator: "; ")
            }.joined(separator: ". ")
        } else if title == Self.failoverTitle {
            guard let rows = fleet.failover, !rows.isEmpty else { return nil }
            text = rows.map { row in
                "`\(row.strategy)`, the replica \(row.replica): a start \(FleetReport.micros(row.startMedianMicros)) "
                    + "(\(FleetReport.ratio(row.startMedianMicros ?? 0, row.pingMedianMicros ?? 0)) a `PING`); "
                    + "\(Self.count(row.started)) started, \(row.threw) threw, \(row.lost) lost and ended, \(row.unheard) unheard, "
                    + "\(row.early) early, \(row.doubled) doubled; finishes due after the failover "
                    + "(\(row.failoverSeconds.map { String(format: "%.1f s", $0) } ?? "never served again")) p99 \(FleetReport.ms(row.finishP99MsAfterFailover)) late"
            }.joined(separator: "; ")
        } else if title == Self.keyspaceExpiryTitle || title == Self.zsetExpiryTitle {
            // Matched whole: the promise rows' titles begin with the same strategy names.
            let strategy = title == Self.keyspaceExpiryTitle ? "redis(keyspace)" : "redis(zset)"
            let rows = fleet.expiry.filter { $0.strategy == strategy }
            guard !rows.isEmpty else { return nil }
            text = rows.map { row in
                "beside \(Self.count(row.idleKeys)): "
                    + (row.heard == row.countdowns
                        ? "all \(Self.count(row.heard)) heard"
                        : "\(Self.count(row.heard)) of \(Self.count(row.countdowns)) heard within \(String(format: "%.0f", row.waitedSeconds)) s")
                    + (row.heard > 0 ? ", p50 \(FleetReport.ms(row.finishP50Ms)), p99 \(FleetReport.ms(row.finishP99Ms))" : "")
            }.joined(separator: "; ")
        } else if let row = fleet.promises.first(where: { Self.title($0) == title }) {
            let r = row.report
            text = "\(Self.count(r.finishesHeard)) of \(Self.count(r.finishesOwed)) owed finishes heard, \(r.finishesLost) lost, "
                + "\(r.finishesEarly) early, \(r.finishedTwice) doubled; \(Self.count(r.staleTicks)) ticks to a replaced, cancelled or paused "
                + "observer more than 100 ms after the call (the latest \(String(format: "%.1f", r.latestTickAfterEndMs)) ms after it); "
                + "\(r.observersHeld) observers held at the end; \(Self.count(r.keys)) keys, \(Self.count(r.calls)) calls"
                + (r.faultsInjected > 0 ? ", \(Self.count(r.faultsInjected)) answers dropped or connections reset" : "")
                + (r.killed > 0 ? ", \(r.killed) processes killed" : "")
                + (r.failedKeys > 0 ? "; \(r.failedKeys) keys no order of the calls explains" : "")
        } else {
            return nil
        }
        return .init(machine: machine.folder, text: text, magnitude: nil, files: [fleetFile])
    }

    /// 100 000, with thin spaces as the README writes counts.
    static func count(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(" ") }
            out.append(character)
        }
        return out
    }
}
