#if Redis
import Countdown
@testable import CountdownConformance
@testable import CountdownRedis
import CountdownSupport
import Foundation
import Testing

/// `redis(zset*3)` on a Redis Cluster of three masters, each with a replica, on loopback ports:
/// the shards on three nodes, each connection following its shard's slot (MOVED), the suite's
/// checks passing, the work spread, and a master killed.
@Suite("Redis Cluster", .dedicatedThread, .serialized, .timeLimit(.minutes(5)))
struct RedisClusterTests {
    static let checks: Set = [
        "start", "finish", "cancel", "attach", "pause-resume", "one-key", "randomized",
        "fleet.race", "fleet.kill", "fleet.attach", "fleet.cancel", "fleet.one-key",
    ]

    /// The suite on `redis(zset*3)`, its members reaching the cluster through `seed` (nil in a member: it is told).
    static func suite(seed: String?) -> CountdownConformance {
        let fleet = CountdownConformance.Fleet(relaunch: .swiftTesting("RedisClusterTests/clusterMember"), members: 3, store: seed, keys: 40)
        let options = CountdownConformance.Options(randomizedOperations: 1000, timeLimitPerCheck: .seconds(90), fleet: fleet)
        return CountdownConformance(name: "redis(zset*3) on a cluster", options: options) { environment in
            // The suite's proxy or a member's told address; in this process, the seed.
            guard let endpoint = (environment.storeAddress ?? seed).flatMap(RedisEndpoint.init) else {
                throw CountdownError.invalidConfiguration("a cluster member is told where the cluster is")
            }
            return try RedisCountdownScheduler(
                endpoint: endpoint, namespace: environment.namespace, strategy: .sortedSet(shards: 3),
                tickInterval: environment.tickInterval, deliveryQueue: environment.deliveryQueue)
        }
    }

    /// `INFO commandstats`' count of `command` calls on each master, those its scripts made
    /// included.
    static func commandCalls(_ command: String, _ cluster: LocalRedisCluster) throws -> [Int] {
        try cluster.nodes.prefix(cluster.masters).map { node in
            let info = try RedisConnection(node.endpoint).call(["INFO", "commandstats"]).text ?? ""
            let line = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("cmdstat_\(command):") } ?? ""
            return Int(line.split(separator: ",").first?.split(separator: "=").last ?? "0") ?? 0
        }
    }

    @Test("three shards land on three masters, the suite's checks pass, and each master writes a third of 30 000 starts (±10 %)")
    func threeShardsOnThreeMasters() throws {
        let cluster = try LocalRedisCluster(masters: 3)
        defer { cluster.remove() }
        let seed = try #require(cluster.endpoint.hostAndPort)
        let owners = try ZSetShards(namespace: "login-limits", count: 3).prefixes.map { try cluster.master(of: ClusterSlot.of($0)) }
        #expect(Set(owners.compactMap { $0 }).count == 3, "the shards' slots are served by \(owners)")

        let report = Self.suite(seed: seed).run(only: Self.checks, concurrency: 2)
        for result in report.results {
            #expect(result.verdict == .pass, "\(result.id) on a cluster was \(result.verdict.rawValue): \(result.messages) — \(result.figure ?? "")")
        }

        let scheduler = try RedisCountdownScheduler(
            endpoint: cluster.endpoint, namespace: "login-limits", strategy: .sortedSet(shards: 3), tickInterval: .seconds(1))
        defer { scheduler.shutdown() }
        // Each start writes its countdown's hash once (HSET), whichever script it came in: a
        // master's share of the writes is its share of the starts.
        let before = try Self.commandCalls("hset", cluster)
        for batch in 0..<30 {
            let starts = scheduler.start((0..<1000).map { ("rate-limit:user:\(100_000_000 + batch * 1000 + $0)", .seconds(30), { _ in }) })
            #expect(starts.allSatisfy { if case .success(.started) = $0 { true } else { false } }, "batch \(batch): \(starts.first { if case .failure = $0 { true } else { false } }.map { "\($0)" } ?? "")")
        }
        let calls = zip(try Self.commandCalls("hset", cluster), before).map { $0 - $1 }
        print("HSET calls per master for 30 000 starts: \(calls)")
        let even = Double(calls.reduce(0, +)) / 3
        #expect(calls.allSatisfy { abs(Double($0) - even) <= even / 10 }, "HSET calls per master for 30 000 starts: \(calls), not within 10 % of \(even)")
        #expect(calls.allSatisfy { $0 >= 10_000 * 9 / 10 }, "HSET calls per master for 30 000 starts: \(calls): fewer than the starts")
        #expect(scheduler.activeCount == 30_000)
    }

    /// Redis replicates asynchronously: what a master acknowledged in its last moments may not
    /// have reached its replica when it dies. A start lost so is a countdown that never finishes
    /// (counted: lost); a claim lost so is made again on the promoted replica, and its finish,
    /// already heard, is not heard twice (the observer is gone from the registry).
    @Test("a master SIGKILLed mid-run, its replica promoted: no finish doubled or early, the lost ones counted")
    func masterKilled() throws {
        let cluster = try LocalRedisCluster(masters: 3)
        defer { cluster.remove() }
        let namespace = "login-limits"
        let a = try RedisCountdownScheduler(endpoint: cluster.endpoint, namespace: namespace, strategy: .sortedSet(shards: 3), tickInterval: .seconds(1))
        let b = try RedisCountdownScheduler(endpoint: cluster.endpoint, namespace: namespace, strategy: .sortedSet(shards: 3), tickInterval: .seconds(1))
        defer { a.shutdown(); b.shutdown() }
        let heard = Locked([String: [UInt64]]())
        func observer(_ key: String) -> CountdownObserver {
            { event in if event.kind == .finished { let at = SystemClocks.monotonic(); heard.withLock { $0[key, default: []].append(at) } } }
        }
        // 600 countdowns of 1.5 to 4.5 s, started over 3 s from two members; the master of shard
        // 1 is killed 1.5 s in.
        var owed: [String: UInt64] = [:]  // key → the earliest its finish may come
        var threw = 0
        let began = SystemClocks.monotonic()
        var killedAt: UInt64 = 0
        for index in 0..<600 {
            if index == 300 {
                killedAt = SystemClocks.monotonic()
                cluster.nodes[1].kill()
            }
            let key = "rate-limit:user:\(100_000_000 + index)"
            let duration = Duration.milliseconds(1_500 + (index * 37) % 3_000)
            let invoked = SystemClocks.monotonic()
            do {
                try (index % 2 == 0 ? a : b).start(key: key, duration: duration, observer: observer(key))
                owed[key] = invoked + UInt64(duration.nanoseconds)
            } catch {
                threw += 1  // the shard's master away, its replica not promoted yet: said, not dropped
            }
            if SystemClocks.monotonic() - invoked < 5_000_000 { usleep(5_000) }
        }
        #expect(cluster.waitUntilServing(), "the replica was not promoted")
        let promoted = SystemClocks.monotonic()
        // Every owed finish heard (or 20 s, which judges the ones missing lost), then two claim
        // heartbeats more for a second finish of any of them.
        _ = realTimeWait(timeout: .seconds(20)) { heard.withLock { heard in owed.keys.allSatisfy { heard[$0] != nil } } }
        usleep(2_000_000)
        let finishes = heard.withLock { $0 }
        let doubled = finishes.values.filter { $0.count > 1 }.count
        let early = owed.filter { key, earliest in (finishes[key]?.first).map { $0 < earliest } ?? false }.count
        let lost = owed.keys.filter { finishes[$0] == nil }.count
        print("""
            master killed \(Double(killedAt - began) / 1e9) s in; the starts made and the cluster serving again \(Double(promoted - killedAt) / 1e9) s after the kill; \
            \(owed.count) started, \(threw) starts threw; \(owed.count - lost) finishes heard, \(lost) lost, \(doubled) doubled, \(early) early
            """)
        #expect(doubled == 0, "\(doubled) countdowns finished twice")
        #expect(early == 0, "\(early) countdowns finished before their deadline")
        #expect(lost <= owed.count / 10, "\(lost) of \(owed.count) finishes lost: more than the starts a master acknowledges in its last moments")
    }

    /// The node named in the URL is the one killed: the running member reads the cluster's map
    /// from another node and reaches the promoted replica (before the map, every call of that
    /// shard went back to the dead seed for ever).
    @Test("the master named in the URL SIGKILLed while a member runs: every shard answers again in the same process, every countdown started after finishes once, never early")
    func seedKilled() throws {
        let cluster = try LocalRedisCluster(masters: 3)
        defer { cluster.remove() }
        let scheduler = try RedisCountdownScheduler(
            endpoint: cluster.endpoint, namespace: "seed-killed", strategy: .sortedSet(shards: 3), tickInterval: .seconds(1))
        defer { scheduler.shutdown() }
        let log = recorder()
        for index in 0..<30 { try scheduler.start(key: "before:\(index)", duration: .seconds(60), observer: log.observer) }
        cluster.nodes[0].kill()
        #expect(cluster.waitUntilServing(), "the replica was not promoted")
        // Each key, tried until it starts, for up to 30 s after the promotion.
        let keys = (0..<60).map { "rate-limit:user:\(100_000_000 + $0)" }
        var invoked: [String: UInt64] = [:]
        let deadline = SystemClocks.monotonic() + 30_000_000_000
        for key in keys {
            while invoked[key] == nil, SystemClocks.monotonic() < deadline {
                let at = SystemClocks.monotonic()
                if (try? scheduler.start(key: key, duration: .milliseconds(500), observer: log.observer)) != nil { invoked[key] = at } else { usleep(100_000) }
            }
        }
        #expect(invoked.count == keys.count, "\(keys.count - invoked.count) of \(keys.count) keys never started again: a shard stayed on the dead node")
        #expect(log.wait(timeout: .seconds(10)) { events in Set(events.filter { $0.event.kind == .finished }.map(\.event.key)).isSuperset(of: invoked.keys) })
        let finishes = log.all.filter { $0.event.kind == .finished && invoked[$0.event.key] != nil }
        #expect(finishes.count == invoked.count, "\(finishes.count) finishes for \(invoked.count) countdowns")
        #expect(finishes.allSatisfy { $0.at >= invoked[$0.event.key]! + 500_000_000 }, "a countdown finished before its deadline")
        // A new member given the dead node first and the living ones after it starts at once.
        let seeds = cluster.nodes.compactMap(\.endpoint.hostAndPort).joined(separator: ",")
        let late = try RedisCountdownScheduler(endpoint: RedisEndpoint(url: "redis://\(seeds)"), namespace: "seed-killed", strategy: .sortedSet(shards: 3))
        defer { late.shutdown() }
        #expect(try late.start(key: "after:new-member", duration: .seconds(60)) { _ in } == .started)
        // The 30 started before the kill: their shard's acknowledged ones may be lost with the
        // master (replication is asynchronous); what the fleet holds is readable again.
        #expect(try scheduler.throwing.activeCount() <= 31)
    }

    @Test("a master other than the URL's whose maxmemory-policy evicts keys: init refuses, naming it, unless allowed")
    func evictingMaster() throws {
        let cluster = try LocalRedisCluster(masters: 3, replicas: false)
        defer { cluster.remove() }
        let third = try #require(cluster.nodes[2].endpoint.hostAndPort)
        _ = try RedisConnection(cluster.nodes[2].endpoint).call(["CONFIG", "SET", "maxmemory-policy", "allkeys-lru"])
        let error = #expect(throws: CountdownError.self) {
            _ = try RedisCountdownScheduler(endpoint: cluster.endpoint, namespace: "evicting", strategy: .sortedSet(shards: 3))
        }
        guard case .invalidConfiguration(let text) = error else { Issue.record("\(String(describing: error))"); return }
        #expect(text.contains("allkeys-lru") && text.contains(third), "names the policy and the master: \(text)")
        let allowed = try RedisCountdownScheduler(
            endpoint: cluster.endpoint, namespace: "evicting", strategy: .sortedSet(shards: 3), evictionAllowed: true)
        allowed.shutdown()
    }

    /// A resharding moves one shard's slot from master 0 to master 1 by hand, as `redis-cli
    /// --cluster reshard` does: IMPORTING and MIGRATING, the keys moved with MIGRATE, then the slot
    /// assigned. Meanwhile the shard's calls wait and throw a typed error; after, they follow MOVED.
    @Test("a shard's slot moved to another master: its calls wait while it moves, then follow MOVED; every countdown finishes once")
    func shardMoved() throws {
        let cluster = try LocalRedisCluster(masters: 3)
        defer { cluster.remove() }
        let namespace = "login-limits"
        let shards = ZSetShards(namespace: namespace, count: 3)
        let s = try RedisCountdownScheduler(endpoint: cluster.endpoint, namespace: namespace, strategy: .sortedSet(shards: 3), tickInterval: .seconds(1))
        defer { s.shutdown() }
        let keys = (0..<150).map { "rate-limit:user:\(100_000_000 + $0)" }.filter { shards.index(of: $0) == 0 }
        let log = recorder()
        for key in keys { try s.start(key: key, duration: .seconds(4), observer: log.observer) }

        let slot = ClusterSlot.of(shards.prefixes[0])
        let source = try RedisConnection(cluster.nodes[0].endpoint), target = try RedisConnection(cluster.nodes[1].endpoint)
        let sourceID = try #require(source.call(["CLUSTER", "MYID"]).text), targetID = try #require(target.call(["CLUSTER", "MYID"]).text)
        guard case .tcp(let host, let port) = cluster.nodes[1].endpoint.address else { return }
        #expect(try target.call(["CLUSTER", "SETSLOT", String(slot), "IMPORTING", sourceID]) == .status("OK"))
        #expect(try source.call(["CLUSTER", "SETSLOT", String(slot), "MIGRATING", targetID]) == .status("OK"))
        let waited = SystemClocks.monotonic()
        #expect(throws: CountdownError.self, "a call on the moving shard answered") { try s.throwing.remaining(key: keys[0]) }
        #expect(SystemClocks.monotonic() - waited >= 900_000_000, "the call did not wait for the slot before it threw")
        while true {
            let moving = try source.call(["CLUSTER", "GETKEYSINSLOT", String(slot), "100"]).elements.compactMap(\.text)
            if moving.isEmpty { break }
            let reply = try source.call(["MIGRATE", host, String(port), "", "0", "5000", "KEYS"] + moving)
            #expect(reply == .status("OK"), "MIGRATE answered \(reply)")
        }
        for node in cluster.nodes.prefix(cluster.masters) {
            #expect(try RedisConnection(node.endpoint).call(["CLUSTER", "SETSLOT", String(slot), "NODE", targetID]) == .status("OK"))
        }
        #expect(try cluster.master(of: slot) == "\(host):\(port)")
        #expect(s.remaining(key: keys[0]) != nil, "after the move, the shard's calls did not reach its new node")
        #expect(log.wait(timeout: .seconds(15)) { $0.filter { $0.event.kind == .finished }.count >= keys.count }, "not every finish was heard")
        let finishes = Dictionary(grouping: log.finishes, by: \.event.key).mapValues(\.count)
        #expect(finishes.count == keys.count && finishes.values.allSatisfy { $0 == 1 }, "\(keys.count) countdowns, finishes \(finishes.values.sorted())")
    }

    /// Run only in a process a fleet check started: it serves as a member and never returns.
    @Test("a cluster fleet check's member", .enabled(if: CountdownConformance.isFleetMember, "runs in a member process"))
    func clusterMember() {
        _ = Self.suite(seed: nil).run(only: [])
    }
}
#endif
