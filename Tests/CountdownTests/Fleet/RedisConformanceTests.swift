#if Redis
import Countdown
import CountdownConformance
import CountdownRedis
import Foundation
import Testing

/// The whole suite on `redis(zset*3)`, against the test process's own redis-server: every check
/// passes (replay: not applicable, real clocks never repeat). Three shards on one server, so
/// that what routes by key (calls, claimers and inboxes per shard, generations unique across
/// shards) is judged by every check; one shard, the default, is judged by the broken fleet
/// backends' tests, the README's fleet example and `countdown-bench conformance` in CI. The fleet checks that need members
/// in processes of their own start this test binary again, running ``fleetMember()``, which
/// serves as the member. `redis(keyspace)` is judged by `countdown-bench conformance --backend
/// redis` in CI, where its verdicts are reported, not asserted.
@Suite("Redis conformance", .dedicatedThread, .timeLimit(.minutes(10)))
struct RedisConformanceTests {
    static let name = "redis(zset*3)"

    /// The suite; `store` is the redis-server the members share (nil in a member: it is told).
    static func suite(store: String?, keys: Int = 40) -> CountdownConformance {
        let fleet = CountdownConformance.Fleet(
            relaunch: .swiftTesting("RedisConformanceTests/fleetMember"), members: 3, store: store, keys: keys)
        let options = CountdownConformance.Options(randomizedOperations: 2000, timeLimitPerCheck: .seconds(90), fleet: fleet)
        return CountdownConformance(name: name, options: options) { environment in
            // A member is told where the store is (the suite's proxy, or the server itself): it
            // never starts a server of its own.
            let endpoint = try environment.storeAddress.flatMap(RedisEndpoint.init) ?? TestRedis.server().endpoint
            return try RedisCountdownScheduler(
                endpoint: endpoint, namespace: environment.namespace, strategy: .sortedSet(shards: 3),
                tickInterval: environment.tickInterval, deliveryQueue: environment.deliveryQueue)
        }
    }

    @Test("redis(zset*3) passes every check", arguments: CountdownConformance.checks)
    func sortedSet(check: ConformanceCheck) async throws {
        let suite = Self.suite(store: try TestRedis.server().endpoint.hostAndPort!)
        let result = await runInSlot(suite, check)
        // Its countdowns are Redis' own: it keeps no CountdownStore, so the store checks shrug.
        let expected: CheckResult.Verdict = check.id == "replay" || check.id.hasPrefix("store.") ? .notApplicable : .pass
        #expect(result.verdict == expected, "\(check.id) on redis(zset*3) was \(result.verdict.rawValue): \(result.messages) — \(result.figure ?? "")")
        if check.id.hasPrefix("fleet.") { print("\(check.id) on redis(zset*3): \(result.verdict.rawValue) — \(result.figure ?? "")") }
    }

    /// `redis(zset)` with every call made through `scheduler.async` (``AsyncCallingScheduler``):
    /// the checks that call from several members and threads at once.
    static func asyncSuite(store: String?) -> CountdownConformance {
        let fleet = CountdownConformance.Fleet(
            relaunch: .swiftTesting("RedisConformanceTests/asyncFleetMember"), members: 3, store: store, keys: 40)
        let options = CountdownConformance.Options(timeLimitPerCheck: .seconds(90), fleet: fleet)
        return CountdownConformance(name: "redis(zset), async calls", options: options) { environment in
            let endpoint = try environment.storeAddress.flatMap(RedisEndpoint.init) ?? TestRedis.server().endpoint
            return AsyncCallingScheduler(try RedisCountdownScheduler(
                endpoint: endpoint, namespace: environment.namespace, tickInterval: environment.tickInterval,
                deliveryQueue: environment.deliveryQueue))
        }
    }

    static let asyncChecks = CountdownConformance.checks.filter {
        $0.id.hasPrefix("fleet.") || ["start", "attach", "cancel", "pause-resume", "events", "counts"].contains($0.id)
    }

    @Test("redis(zset) through its async calls passes the fleet checks and the calls' own", arguments: asyncChecks)
    func asyncCalls(check: ConformanceCheck) async throws {
        let result = await runInSlot(Self.asyncSuite(store: try TestRedis.server().endpoint.hostAndPort!), check)
        #expect(result.verdict == .pass, "\(check.id) through async calls was \(result.verdict.rawValue): \(result.messages) — \(result.figure ?? "")")
    }

    @Test("an async fleet check's member", .enabled(if: CountdownConformance.isFleetMember, "runs in a member process"))
    func asyncFleetMember() {
        _ = Self.asyncSuite(store: nil).run(only: [])
    }

    /// Run only in a process a fleet check started: it serves as a member and never returns.
    @Test("a fleet check's member", .enabled(if: CountdownConformance.isFleetMember, "runs in a member process"))
    func fleetMember() {
        _ = Self.suite(store: nil).run(only: [])
    }
}

#endif
