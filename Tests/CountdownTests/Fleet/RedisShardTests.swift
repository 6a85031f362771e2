#if Redis
import Countdown
@testable import CountdownConformance
@testable import CountdownRedis
import Testing

/// A namespace spread over S hash tags: where each key goes, and where each tag lands in a cluster.
@Suite("Sorted-set shards", .dedicatedThread, .timeLimit(.minutes(2)))
struct RedisShardTests {
    @Test("the cluster slot of a key is the server's: CRC16 of the key or of its hash tag")
    func clusterSlot() {
        // The values Redis' documentation gives for CLUSTER KEYSLOT.
        #expect(ClusterSlot.of("somekey") == 11058)
        #expect(ClusterSlot.of("foo{hash_tag}") == 2515)
        #expect(ClusterSlot.of("{hash_tag}:anything") == ClusterSlot.of("hash_tag"))
        #expect(ClusterSlot.of("a{}b") == Int(ClusterSlot.crc16(Array("a{}b".utf8)[...])) % 16_384, "an empty tag is no tag")
    }

    @Test("a cluster's redirects: MOVED and ASK with their slot and node; any other error is none")
    func redirects() {
        #expect(ClusterRedirect("MOVED 3999 127.0.0.1:6381") == ClusterRedirect(kind: .moved, slot: 3999, address: .tcp(host: "127.0.0.1", port: 6381)))
        #expect(ClusterRedirect("ASK 3999 [::1]:6381") == ClusterRedirect(kind: .ask, slot: 3999, address: .tcp(host: "::1", port: 6381)))
        #expect(ClusterRedirect("ERR unknown command") == nil)
        #expect(ClusterRedirect("MOVED x 127.0.0.1:6381") == nil)
        #expect(RedisFailure.server("ASK 3999 127.0.0.1:6381").isTransient, "an ASK is waited out")
        #expect(!RedisFailure.server("MOVED 3999 127.0.0.1:6381").isTransient, "a MOVED is followed, not waited out")
    }

    @Test("one shard is today's layout; S shards are S tags, each on its own S-th of the slots")
    func layout() {
        #expect(ZSetShards(namespace: "countdown", count: 1).prefixes == ["{countdown}"])
        for count in [2, 3, 5] {
            let shards = ZSetShards(namespace: "countdown", count: count)
            #expect(Set(shards.prefixes).count == count)
            for (index, prefix) in shards.prefixes.enumerated() {
                let slot = ClusterSlot.of(prefix)
                #expect(slot * count / ClusterSlot.count == index, "shard \(index) of \(count), \(prefix), is on slot \(slot)")
            }
        }
    }

    @Test("a key's shard is stable and the keys spread evenly")
    func spread() {
        let shards = ZSetShards(namespace: "countdown", count: 3)
        #expect(shards.index(of: "rate-limit:user:100000000-0") == ZSetShards(namespace: "other", count: 3).index(of: "rate-limit:user:100000000-0"))
        var counts = [0, 0, 0]
        for user in 0..<30_000 { counts[shards.index(of: "rate-limit:user:\(100_000_000 + user)")] += 1 }
        #expect(counts.allSatisfy { (9_500...10_500).contains($0) }, "30 000 keys over 3 shards: \(counts)")
    }

    @Test("three shards on one server: each holds its keys, generations stay unique, every finish is heard once")
    func threeShardsOnOneServer() throws {
        let server = try TestRedis.server()
        let namespace = TestRedis.namespace()
        let s = try RedisCountdownScheduler(
            endpoint: server.endpoint, namespace: namespace, strategy: .sortedSet(shards: 3), tickInterval: .milliseconds(100))
        defer { s.shutdown() }
        // Long enough that none ends while they are counted, however slow the machine (with
        // 300 ms, 30 starts one after another on a loaded machine saw 5 end first).
        let keys = (0..<30).map { "rate-limit:user:\(100_000_000 + $0)" }
        for key in keys { try s.start(key: key, duration: .seconds(600)) { _ in } }
        #expect(s.observedHere == 30, "30 countdowns started, \(s.observedHere) observed: generations of two shards collided")
        #expect(s.activeCount == 30 && Set(s.activeKeys) == Set(keys))
        let admin = try RedisConnection(server.endpoint)
        for prefix in ZSetShards(namespace: namespace, count: 3).prefixes {
            let held = try admin.call(["ZCARD", "\(prefix):d"]).int ?? 0
            #expect(held > 0, "shard \(prefix) holds none of the 30")
        }
        #expect(s.pause(key: keys[0]) && s.resume(key: keys[0]) && s.cancel(key: keys[1]))
        for key in keys[2...] { #expect(s.cancel(key: key)) }
        // Every finish over three shards, once: 30 more of 300 ms, and the one resumed, shortened.
        let log = recorder()
        let short = (0..<30).map { "sms-code:+86138\(String(format: "%08d", $0))" }
        for key in short { try s.start(key: key, duration: .milliseconds(300), observer: log.observer) }
        #expect(s.cancel(key: keys[0]))
        try s.start(key: keys[0], duration: .milliseconds(300), observer: log.observer)
        #expect(log.wait { $0.filter { $0.event.kind == .finished }.count >= 31 }, "not every finish was heard")
        let finishes = Dictionary(grouping: log.finishes, by: \.event.key).mapValues(\.count)
        #expect(finishes.count == 31 && finishes.values.allSatisfy { $0 == 1 } && finishes[keys[1]] == nil)
        #expect(s.activeCount == 0)
    }

    @Test("shards outside 1…64 are an invalid configuration; nothing is started")
    func badShards() throws {
        let server = try TestRedis.server()
        for shards in [0, 65] {
            #expect(throws: CountdownError.self) {
                try RedisCountdownScheduler(endpoint: server.endpoint, strategy: .sortedSet(shards: shards))
            }
        }
    }
}
#endif
