import Foundation

/// The guide's statements on the Redis strategies, from each machine's `redis/fleet.json` and
/// `redis/conformance.json`: one reading per machine that has them.
struct FleetGuide {
    let library: ResultsLibrary

    var statements: [Guide.Statement] {
        let titles = scaleTitles + [
            "`redis(zset)`, one call at a time beside a `PING`",
            "`redis(keyspace)`, 1 000 countdowns due over 1–2 s beside idle keys with a one-hour TTL",
            "`redis(zset)`, the same beside the same idle keys",
            "A fleet of 4 worker processes, one killed with SIGKILL each round",
            "Conformance of the Redis strategies",
        ]
        return titles.map { title in
            Guide.Statement(title: title, cell: Guide.Cell(readings: library.machines.compactMap { reading(title, $0) }))
        }.filter { !$0.cell.readings.isEmpty }
    }

    /// One statement per scale row measured on any machine.
    private var scaleTitles: [String] {
        let counts = Set(library.machines.flatMap { $0.fleet?.scale.map(\.countdowns) ?? [] }).sorted()
        return counts.map { "`redis(zset)`, \(Self.count($0)) countdowns of 3 s at 1 s ticks, started pipelined" }
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
        } else if title.hasPrefix("`redis(keyspace)`") || title.hasPrefix("`redis(zset)`, the same") {
            let strategy = title.hasPrefix("`redis(keyspace)`") ? "redis(keyspace)" : "redis(zset)"
            let rows = fleet.expiry.filter { $0.strategy == strategy }
            guard !rows.isEmpty else { return nil }
            text = rows.map { row in
                "beside \(Self.count(row.idleKeys)): "
                    + (row.heard == row.countdowns
                        ? "all \(Self.count(row.heard)) heard"
                        : "\(Self.count(row.heard)) of \(Self.count(row.countdowns)) heard within \(String(format: "%.0f", row.waitedSeconds)) s")
                    + (row.heard > 0 ? ", p50 \(FleetReport.ms(row.finishP50Ms)), p99 \(FleetReport.ms(row.finishP99Ms))" : "")
            }.joined(separator: "; ")
        } else if title.hasPrefix("A fleet") {
            guard let kills = fleet.kills else { return nil }
            text = "\(kills.rounds) rounds of \(Self.count(kills.countdowns / max(kills.rounds, 1))) countdowns: \(kills.doubled) finishes doubled; "
                + "\(Self.count(kills.heardByLiving)) of \(Self.count(kills.owedToLiving)) owed to the living heard, \(kills.lostAmongLiving) lost; "
                + "\(Self.count(kills.owedToKilled)) unheard with their observers' process"
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
