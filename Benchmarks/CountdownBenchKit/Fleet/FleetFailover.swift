#if Redis
import Countdown
import CountdownRedis
import CountdownSupport
import Foundation

/// Part 6 of `countdown-bench fleet`: what a start costs acknowledged by a replica (`WAIT`), and
/// what it saves when a master is SIGKILLed. On a Redis Cluster of three masters with a replica
/// each (the benchmark's own), `redis(zset*3)` with and without `replicas`: first starts one at a
/// time beside a `PING`; then threads start countdowns back to back while master 1 is killed
/// halfway, its replica promoted. Starts a master acknowledged and the replica never received
/// are lost: each member ends such an observer with a finish past its deadline and counts it
/// (`lostCountdowns`). Twice each: the killed master's replica in step; and the replica behind,
/// stopped (SIGSTOP) from the run's start until the kill, with the master set to cut off a
/// replica more than 64 kB behind (Redis' `client-output-buffer-limit`), as a slow or
/// partitioned replica would be. On loopback the kernel's socket buffers hold megabytes for the
/// stopped replica (the last results without ballast: nothing lost), so 32 MB of ballast is
/// written to the master first: the buffers fill, the master cuts the replica off, and what it
/// acknowledges after that the replica never receives.
enum FleetFailover {
    enum Scenario: String, CaseIterable {
        case inStep = "in step"
        case behind = "behind"
    }

    struct Sizes {
        var costCalls = 1000
        var threads = 16
        var seconds = 3.0
    }

    static func measure(sizes: Sizes = .init(), progress: (String) -> Void) throws -> [FleetDocument.FailoverRow] {
        try Scenario.allCases.flatMap { scenario in
            try [nil, RedisReplicas.acknowledged(by: 1, within: .milliseconds(100))].map { replicas in
                try run(replicas, scenario, sizes, progress)
            }
        }
    }

    /// What happened to one start of the run: when it was asked for, for how long, its answer.
    private struct Start {
        var key: String
        var invoked: UInt64
        var duration: Duration
        var answer: Result<CountdownStart, CountdownError>
    }

    private static func run(
        _ replicas: RedisReplicas?, _ scenario: Scenario, _ sizes: Sizes, _ progress: (String) -> Void
    ) throws -> FleetDocument.FailoverRow {
        let strategy = RedisStrategy.sortedSet(shards: 3, replicas: replicas)
        progress("failover: redis(\(strategy.variant)), the replica \(scenario.rawValue)")
        let cluster = try LocalRedisCluster(masters: 3)
        defer { cluster.remove() }
        guard cluster.waitUntilServing() else { throw CountdownError.unavailable(.server, "the cluster did not come up") }
        let scheduler = try RedisCountdownScheduler(
            endpoint: cluster.endpoint, namespace: "fleet-failover", strategy: strategy, tickInterval: .seconds(1))
        defer { scheduler.shutdown() }
        let (startMicros, pingMicros) = try cost(scheduler, cluster, calls: sizes.costCalls)

        let finishes = Locked([String: [UInt64]]())
        let starts = Locked([Start]())
        let began = SystemClocks.monotonic()
        let stopAt = began + UInt64(sizes.seconds * 1e9)
        let killAt = began + UInt64(sizes.seconds * 0.5e9)
        let killed = Locked<UInt64?>(nil)
        let done = DispatchGroup()
        for thread in 0..<sizes.threads {
            done.enter()
            Thread {
                var index = thread
                while SystemClocks.monotonic() < stopAt {
                    // Due 6–8 s on: after the cluster has promoted the replica (a 1 s node timeout).
                    let key = KeyShape.real.key(index)
                    let duration = Duration.milliseconds(6_000 + index % 2_000)
                    let invoked = SystemClocks.monotonic()
                    let answer = Result { () throws(CountdownError) in
                        try scheduler.start(key: key, duration: duration) { event in
                            guard event.kind == .finished else { return }
                            let at = SystemClocks.monotonic()
                            finishes.withLock { $0[key, default: []].append(at) }
                        }
                    }
                    starts.withLock { $0.append(Start(key: key, invoked: invoked, duration: duration, answer: answer)) }
                    index += sizes.threads
                }
                done.leave()
            }.start()
        }
        // Master 1's replica is node 4 (the masters, then their replicas in order).
        let replica = cluster.nodes[cluster.masters + 1]
        if scenario == .behind {
            let master = try RedisAdmin(cluster.nodes[1].endpoint)
            try master.configSet("client-output-buffer-limit", "replica 64kb 16kb 1")
            kill(replica.processIdentifier, SIGSTOP)
            let ballast = cluster.key(onMaster: 1, prefix: "fleet-failover:ballast")
            try master.writeBallast(ballast, value: String(repeating: "b", count: 1 << 20), times: 32)
        }
        while SystemClocks.monotonic() < killAt { usleep(1_000) }
        cluster.nodes[1].kill()
        killed.withLock { $0 = SystemClocks.monotonic() }
        if scenario == .behind { kill(replica.processIdentifier, SIGCONT) }
        done.wait()
        let killedAt = killed.withLock { $0 } ?? killAt
        let serving = cluster.waitUntilServing(timeout: .seconds(30))
        let servingAt = SystemClocks.monotonic()
        let made = starts.withLock { $0 }
        let owed = made.filter { if case .success(.started) = $0.answer { true } else { false } }
        let lastDeadline = owed.map { $0.invoked + UInt64($0.duration.nanoseconds) }.max() ?? servingAt
        // Every finish owed heard, or 10 s past the last deadline; then a second more for doubles.
        while SystemClocks.monotonic() < lastDeadline + 10_000_000_000,
              finishes.withLock({ heard in !owed.allSatisfy { heard[$0.key] != nil } }) {
            usleep(50_000)
        }
        usleep(1_000_000)
        let heard = finishes.withLock { $0 }
        progress("failover: \(owed.count) started, \(scheduler.lostCountdowns) lost")
        return row(strategy, replicas, scenario, made, owed, heard, scheduler.lostCountdowns, killedAt: killedAt, servingAt: serving ? servingAt : nil,
                   startMicros: startMicros, pingMicros: pingMicros)
    }

    /// Starts one at a time (then cancelled), and as many `PING`s to the same master, µs each.
    private static func cost(
        _ scheduler: RedisCountdownScheduler, _ cluster: LocalRedisCluster, calls: Int
    ) throws -> (LatencyHistogram, LatencyHistogram) {
        var startMicros = LatencyHistogram(), pingMicros = LatencyHistogram()
        let admin = try RedisAdmin(cluster.endpoint)
        for index in 0..<calls {
            let key = "cost:" + KeyShape.real.key(index)
            let began = SystemClocks.monotonic()
            _ = try scheduler.start(key: key, duration: .seconds(600)) { _ in }
            let middle = SystemClocks.monotonic()
            try admin.ping()
            pingMicros.record(SystemClocks.monotonic() - middle)
            startMicros.record(middle - began)
            _ = scheduler.cancel(key: key)
        }
        return (startMicros, pingMicros)
    }

    private static func row(
        _ strategy: RedisStrategy, _ replicas: RedisReplicas?, _ scenario: Scenario, _ made: [Start], _ owed: [Start], _ heard: [String: [UInt64]],
        _ lost: Int, killedAt: UInt64, servingAt: UInt64?, startMicros: LatencyHistogram, pingMicros: LatencyHistogram
    ) -> FleetDocument.FailoverRow {
        let refused = made.compactMap { if case .failure(let error) = $0.answer { error } else { nil } }
        let notReplicated = refused.filter { if case .unavailable(.notReplicated, _) = $0 { true } else { false } }.count
        var early = 0, unheard = 0, doubled = 0
        var lateAfter = LatencyHistogram()
        for start in owed {
            let deadline = start.invoked + UInt64(start.duration.nanoseconds)
            guard let times = heard[start.key], let first = times.first else {
                unheard += 1
                continue
            }
            if times.count > 1 { doubled += 1 }
            if first < deadline { early += 1 }
            // Due once the cluster served again: a finish late past that is the engine's, not the failover's pause.
            if let servingAt, deadline >= servingAt + 1_000_000_000, first >= deadline { lateAfter.record(first - deadline) }
        }
        return FleetDocument.FailoverRow(
            strategy: "redis(\(strategy.variant))", replica: scenario.rawValue, replicas: replicas?.count ?? 0, waitMs: replicas.map { Double($0.timeout.nanoseconds) / 1e6 },
            startMedianMicros: micros(startMicros, 50), startP99Micros: micros(startMicros, 99), pingMedianMicros: micros(pingMicros, 50),
            attempted: made.count, started: owed.count, threw: refused.count, notReplicated: notReplicated,
            failoverSeconds: servingAt.map { Double($0 - killedAt) / 1e9 }, lost: lost, unheard: unheard, early: early, doubled: doubled,
            finishP99MsAfterFailover: micros(lateAfter, 99).map { $0 / 1000 }, finishMaxMsAfterFailover: micros(lateAfter, 100).map { $0 / 1000 })
    }

    private static func micros(_ histogram: LatencyHistogram, _ percent: Double) -> Double? {
        histogram.percentile(percent).map { Double($0.nanoseconds) / 1000 }
    }
}
#endif
