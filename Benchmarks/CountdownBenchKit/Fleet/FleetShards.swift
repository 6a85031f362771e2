#if Redis
import Countdown
import CountdownRedis
import CountdownSupport
import Foundation

/// Part 4 of `countdown-bench fleet`: `redis(zset)` with its namespace over S shards, on a
/// Redis Cluster of three masters of the benchmark's own (no replicas: the CPU read is the
/// masters'). N countdowns started pipelined, in batches of a thousand; each master's CPU per
/// start and share of the scripts.
enum FleetShards {
    static let masters = 3

    static func measure(count: Int, shards: [Int], progress: (String) -> Void) throws -> [FleetDocument.ShardRow] {
        let cluster = try LocalRedisCluster(masters: masters, replicas: false)
        defer { cluster.remove() }
        let nodes = Array(cluster.nodes.prefix(masters))
        let admins = try nodes.map { node in try RedisAdmin(node.endpoint) }
        var rows: [FleetDocument.ShardRow] = []
        for shardCount in shards {
            progress("shards: \(count) starts over \(shardCount) shard(s) of a \(masters)-master cluster")
            let scheduler = try RedisCountdownScheduler(
                endpoint: cluster.endpoint, namespace: "fleet-shards-\(shardCount)", strategy: .sortedSet(shards: shardCount),
                tickInterval: .seconds(1), maximumDuration: .seconds(3600))
            defer { scheduler.shutdown() }
            let cpuBefore = nodes.map { $0.cpuNanoseconds ?? 0 }
            let callsBefore = try admins.map { try $0.commandStats("evalsha").calls }
            let began = SystemClocks.monotonic()
            var started = 0
            for first in stride(from: 0, to: count, by: 1000) {
                // Long countdowns: nothing finishes, so the scripts counted are the starts'.
                let answers = scheduler.start((first..<min(count, first + 1000)).map { index in
                    (key: KeyShape.real.key(index), duration: Duration.seconds(600), observer: { (_: CountdownEvent) in })
                })
                started += answers.filter { if case .success = $0 { true } else { false } }.count
            }
            let elapsed = SystemClocks.monotonic() - began
            let cpu = zip(nodes.map { $0.cpuNanoseconds ?? 0 }, cpuBefore).map { $0 &- $1 }
            let calls = zip(try admins.map { try $0.commandStats("evalsha").calls }, callsBefore).map { $0 - $1 }
            let total = max(calls.reduce(0, +), 1)
            rows.append(FleetDocument.ShardRow(
                shards: shardCount, nodes: masters, countdowns: count, started: started, startPhaseMs: Double(elapsed) / 1e6,
                redisCPUPerStartMicros: cpu.map { Double($0) / Double(max(started, 1)) / 1000 },
                scriptShare: calls.map { Double($0) / Double(total) }))
        }
        return rows
    }
}
#endif
