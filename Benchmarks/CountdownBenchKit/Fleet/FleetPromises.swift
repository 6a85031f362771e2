#if Redis
import Countdown
import CountdownConformance
import CountdownRedis
import Foundation

/// What a fleet promises, measured: the conformance suite's fleet trials (members in processes
/// of their own, each a `countdown-bench conformance` started again to serve), at the sizes a
/// server sees, with the faults a fleet must survive between them. Each row is judged as the
/// suite judges (``FleetTrialReport``): doubled, early and lost finishes, late ticks to replaced
/// observers, observers held at the end.
enum FleetPromises {
    struct Sizes {
        var raceMembers = 4, raceKeys = 2000, killRounds = 5, cancelPairs = 300, claimRounds = 100, dropped = 200
        static let quick = Sizes(raceMembers: 3, raceKeys: 150, killRounds: 1, cancelPairs: 50, claimRounds: 20, dropped: 50)
    }

    static let duration = Duration.seconds(2), tick = Duration.milliseconds(250)

    /// Every row, on `server` (restarted for the last row when it is ours).
    static func measure(sizes: Sizes, server: RedisUnderTest, progress: (String) -> Void) throws -> [FleetDocument.PromiseRow] {
        var rows: [FleetDocument.PromiseRow] = []
        func row(_ name: String, _ title: String, _ backend: CountdownBackend, rounds: Int = 1, _ make: (Int) throws -> FleetTrial)
            throws
        {
            progress("promises: \(title), \(backend)")
            let suite = try ConformanceCommand.suite(for: backend, options: .init(), store: server.endpoint)
            var total: FleetTrialReport?
            for round in 0..<rounds {
                let report = try suite.fleetTrial(try make(round))
                total = total.map { $0.adding(report) } ?? report
            }
            rows.append(.init(name: name, title: title, strategy: backend.description, rounds: rounds, report: total!))
            progress("promises: \(backend): \(total!.summary)")
        }
        let zset = CountdownBackend.redisZSet(), keyspace = CountdownBackend.redisKeyspace
        for backend in [zset, keyspace] {
            try row("race", "\(sizes.raceMembers) processes race start, attach, cancel, pause and resume on \(sizes.raceKeys) keys", backend) { _ in
                trial(members: sizes.raceMembers, keys: sizes.raceKeys, spread: .milliseconds(Int64(2 * sizes.raceKeys)))
            }
        }
        try row("race-killed", "the same, one process SIGKILLed each round right after starting countdowns others observe",
                zset, rounds: sizes.killRounds) { round in
            var t = trial(members: sizes.raceMembers, keys: sizes.raceKeys, spread: .milliseconds(Int64(2 * sizes.raceKeys)))
            let victim = round % sizes.raceMembers
            t.workload = t.workload.handingOver(20, from: victim, members: sizes.raceMembers)
            t.kill = (member: victim, after: .nanoseconds(t.workload.lastOffset + 20_000_000))
            return t
        }
        try row("cancel-pairs", "start and cancel of one key from two processes 0–1 ms apart, \(sizes.cancelPairs) pairs", zset) { _ in
            trial(members: 2, keys: sizes.cancelPairs, spread: .milliseconds(Int64(3 * sizes.cancelPairs)), scenarios: [.cancel])
        }
        let proxy = try FaultProxy(upstream: server.endpoint.hostAndPort!)
        defer { proxy.stop() }
        try row("claim-answers-dropped", "every claim's answer dropped before it is read (each claim sent again), \(sizes.claimRounds) countdowns", zset) { _ in
            var t = trial(members: 2, keys: sizes.claimRounds, spread: .milliseconds(Int64(40 * sizes.claimRounds)), scenarios: [.alone])
            t.storeAddress = proxy.address
            t.proxy = proxy
            t.fault = .dropFirstAnswers(toRequestsContaining: ":claimer\r\n")
            return t
        }
        // Closing every client, or restarting Redis, would do it to a user's own clients too:
        // on our own server only.
        if server.isOwn {
            let admin = try server.connection()
            for backend in [zset, keyspace] {
                try row("clients-killed", "CLIENT KILL TYPE normal every 200 ms for 3 s, \(sizes.dropped) countdowns", backend) { _ in
                    var t = trial(members: 3, keys: sizes.dropped, spread: .seconds(3))
                    t.disruptions = [.init(after: .zero, every: .milliseconds(200), until: .seconds(3)) { _ = try? admin.killClients(type: "normal") }]
                    return t
                }
            }
            for backend in [zset, keyspace] {
                try row("redis-restarted", "Redis SIGKILLed and restarted from its append-only file, 1.5 s after the last call, \(sizes.dropped) countdowns",
                        backend) { _ in
                    var t = trial(members: 3, keys: sizes.dropped, spread: .milliseconds(Int64(2 * sizes.dropped)))
                    t.disruptions = [.init(after: .nanoseconds(t.workload.lastOffset) + .milliseconds(1500)) { server.crashAndRestart() }]
                    return t
                }
            }
        }
        return rows
    }

    private static func trial(
        members: Int, keys: Int, spread: Duration, scenarios: [FleetWorkload.Scenario] = FleetWorkload.Scenario.racing
    ) -> FleetTrial {
        let workload = FleetWorkload.races(
            keys: keys, members: members, spread: spread, duration: duration, scenarios: scenarios, seed: UInt64.random(in: 1...UInt64(UInt32.max)))
        return FleetTrial(members: members, workload: workload, tick: tick, namespace: RedisTarget.freshName())
    }
}
#endif
