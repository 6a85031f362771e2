import Foundation

/// `fleet.txt`: the fleet document as tables, every figure with what it counts.
struct FleetReport {
    let document: FleetDocument

    var text: String {
        var out = "countdown-bench fleet — \(document.machine.summary)\n\(document.redis)\n"
        if !document.scale.isEmpty {
            out += "\nredis(zset) at scale: countdowns of 3 s at 1 s ticks, started pipelined over one tick\n"
            var table = TextTable(columns: [
                "N", "started", "finished", "start phase", "finish p50", "p99", "max", "tick p99",
                "CPU/event", "redis CPU/event", "Lua/start", "Redis B/countdown",
            ])
            for row in document.scale {
                table.add([
                    "\(row.countdowns)", "\(row.started)", "\(row.finished)", Self.ms(row.startPhaseMs),
                    Self.ms(row.finishP50Ms), Self.ms(row.finishP99Ms), Self.ms(row.finishMaxMs), Self.ms(row.tickP99Ms),
                    Self.micros(row.cpuPerEventMicros), Self.micros(row.redisCPUPerEventMicros), Self.micros(row.luaMicrosPerStart),
                    row.redisBytesPerCountdown.map { String(format: "%.0f", $0) } ?? "-",
                ])
            }
            out += table.render()
            out += "\nOne call at a time (medians of each row's calls): start, cancel, and a PING in the same minutes\n"
            var calls = TextTable(columns: ["N before", "calls", "start", "cancel", "PING", "start ÷ PING", "cancel ÷ PING"])
            for row in document.scale {
                calls.add([
                    "\(row.countdowns)", "\(row.calls)", Self.micros(row.startMedianMicros), Self.micros(row.cancelMedianMicros),
                    Self.micros(row.pingMedianMicros), Self.ratio(row.startMedianMicros, row.pingMedianMicros),
                    Self.ratio(row.cancelMedianMicros, row.pingMedianMicros),
                ])
            }
            out += calls.render()
        }
        if !document.expiry.isEmpty {
            out += "\nExpiry beside idle keys: 1000 countdowns due over 1-2 s, beside keys with a one-hour TTL\n"
            var table = TextTable(columns: ["strategy", "idle keys", "heard", "within", "finish p50", "p99", "max"])
            for row in document.expiry {
                table.add([
                    row.strategy, "\(row.idleKeys)", "\(row.heard) of \(row.countdowns)", String(format: "%.0f s", row.waitedSeconds),
                    Self.ms(row.finishP50Ms), Self.ms(row.finishP99Ms), Self.ms(row.finishMaxMs),
                ])
            }
            out += table.render()
        }
        if let shards = document.shards, !shards.isEmpty {
            out += "\nredis(zset) over S shards on a Redis Cluster of \(shards[0].nodes) masters of its own, N pipelined starts (this machine's cores shared by every master and this process)\n"
            var table = TextTable(columns: [
                "S", "started", "start phase", "starts/s", "Redis CPU/start, each master", "share of scripts, each master",
                "ceiling, a core per master",
            ])
            for row in shards {
                table.add([
                    "\(row.shards)", "\(row.started) of \(row.countdowns)", Self.ms(row.startPhaseMs), String(format: "%.0f", row.startsPerSecond),
                    row.redisCPUPerStartMicros.map { String(format: "%.1f µs", $0) }.joined(separator: " / "),
                    row.scriptShare.map { String(format: "%.0f %%", $0 * 100) }.joined(separator: " / "),
                    row.ceilingPerSecond.map { String(format: "%.0f/s", $0) } ?? "-",
                ])
            }
            out += table.render()
        }
        if let servers = document.servers, !servers.isEmpty {
            out += "\nredis(zset) called as servers call it: C tasks on the cooperative pool, each request a start then a cancel, beside a task sleeping 5 ms at a time\n"
            var table = TextTable(columns: ["calls", "C", "requests", "calls/s", "request p50", "p99", "heartbeat late p99", "max", "heartbeats"])
            for row in servers {
                table.add([
                    row.api, "\(row.tasks)", "\(row.requests)", String(format: "%.0f", row.callsPerSecond), Self.ms(row.requestP50Ms),
                    Self.ms(row.requestP99Ms), Self.ms(row.heartbeatP99Ms), Self.ms(row.heartbeatMaxMs), "\(row.heartbeats)",
                ])
            }
            out += table.render()
        }
        if let failover = document.failover, !failover.isEmpty {
            out += "\nA master SIGKILLed: redis(zset*3) on a Redis Cluster of 3 masters with a replica each; a start one at a time on the healthy cluster, then 16 threads starting countdowns of 6-8 s, master 1 killed halfway; its replica in step, or behind (stopped from the run's start until the kill, and cut off by its master after 32 MB of ballast)\n"
            var table = TextTable(columns: [
                "strategy", "replica", "start", "p99", "start ÷ PING", "started", "threw", "not replicated", "failover", "lost", "unheard",
                "early", "doubled", "finish p99 after", "max",
            ])
            for row in failover {
                table.add([
                    row.strategy, row.replica, Self.micros(row.startMedianMicros), Self.micros(row.startP99Micros),
                    Self.ratio(row.startMedianMicros ?? 0, row.pingMedianMicros ?? 0), "\(row.started) of \(row.attempted)", "\(row.threw)",
                    "\(row.notReplicated)", row.failoverSeconds.map { String(format: "%.1f s", $0) } ?? "not served again",
                    "\(row.lost)", "\(row.unheard)", "\(row.early)", "\(row.doubled)",
                    Self.ms(row.finishP99MsAfterFailover), Self.ms(row.finishMaxMsAfterFailover),
                ])
            }
            out += table.render()
            out += "  lost: observers ended because their countdown was gone from Redis (lostCountdowns); finish p99/max after: lateness of the finishes due 1 s or more after the cluster served again\n"
        }
        if !document.promises.isEmpty {
            out += "\nWhat a fleet keeps: members in processes of their own racing on keys (countdowns of 2 s at 250 ms ticks), judged as the conformance suite judges\n"
            var table = TextTable(columns: [
                "case", "strategy", "rounds", "keys", "calls", "faults", "owed", "heard", "lost", "early", "doubled",
                "late ticks", "latest after end", "held", "unexplained keys",
            ])
            for row in document.promises {
                let r = row.report
                table.add([
                    row.name, row.strategy, "\(row.rounds)", "\(r.keys)", "\(r.calls)", "\(r.faultsInjected + r.killed)",
                    "\(r.finishesOwed)", "\(r.finishesHeard)", "\(r.finishesLost)", "\(r.finishesEarly)", "\(r.finishedTwice)",
                    "\(r.staleTicks)", String(format: "%.1f ms", r.latestTickAfterEndMs), "\(r.observersHeld)", "\(r.failedKeys)",
                ])
            }
            out += table.render()
            for row in document.promises {
                out += "  \(row.name), \(row.strategy): \(row.title)\n"
                for failure in row.report.failures.prefix(3) { out += "    \(failure)\n" }
            }
        }
        return out
    }

    static func ms(_ value: Double?) -> String {
        guard let value else { return "-" }
        return value >= 1000 ? String(format: "%.1f s", value / 1000) : value >= 10 ? String(format: "%.0f ms", value) : String(format: "%.2f ms", value)
    }

    static func micros(_ value: Double?) -> String {
        guard let value else { return "-" }
        return String(format: "%.1f µs", value)
    }

    static func ratio(_ a: Double, _ b: Double) -> String { b > 0 ? String(format: "%.2f×", a / b) : "-" }
}
