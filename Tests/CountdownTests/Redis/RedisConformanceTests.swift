#if Redis
import Countdown
import CountdownConformance
import CountdownRedis
import Testing

/// The whole suite on `redis(zset)`, against the test process's own redis-server: every check
/// passes (replay: not applicable, real clocks never repeat). `redis(keyspace)` is judged by
/// `countdown-bench conformance --backend redis` in CI, where its verdicts are reported, not
/// asserted: its fleet verdict rests on races it does not order.
@Suite("Redis conformance", .dedicatedThread, .timeLimit(.minutes(3)))
struct RedisConformanceTests {
    static func suite() throws -> CountdownConformance {
        let endpoint = try TestRedis.server().endpoint
        let options = CountdownConformance.Options(randomizedOperations: 2000, timeLimitPerCheck: .seconds(60))
        return CountdownConformance(name: "redis(zset)", options: options) { environment in
            try RedisCountdownScheduler(
                endpoint: endpoint, namespace: environment.namespace, strategy: .sortedSet(),
                tickInterval: environment.tickInterval, deliveryQueue: environment.deliveryQueue)
        }
    }

    @Test("redis(zset) passes every check", arguments: CountdownConformance.checks)
    func sortedSet(check: ConformanceCheck) async throws {
        let result = await runInSlot(try Self.suite(), check)
        let expected: CheckResult.Verdict = check.id == "replay" ? .notApplicable : .pass
        #expect(result.verdict == expected, "\(check.id) on redis(zset) was \(result.verdict.rawValue): \(result.messages)")
    }
}
#endif
