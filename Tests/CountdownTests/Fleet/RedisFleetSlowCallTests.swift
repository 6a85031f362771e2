#if Redis
@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownRedis
import Foundation
import Testing

/// `fleet.cancel` once failed a correct fleet in CI (`redis(zset)` through its async calls, four
/// lanes at once): the other member's calls came after its 400 ms countdown had finished, so the
/// cancel found nothing. `fleet.attach` stood on the same premise. A countdown that ended before
/// the other member's call is not what either check judges: each is done again, longer.
@Suite(.dedicatedThread, .timeLimit(.minutes(2)))
struct RedisFleetSlowCallTests {
    /// Each `remaining` answers 450 ms late: the other member asks it before it cancels.
    final class SlowRemaining: ForwardingScheduler, @unchecked Sendable {
        override func remaining(key: String) -> Duration? {
            let answer = inner.remaining(key: key)
            Thread.sleep(forTimeInterval: 0.45)
            return answer
        }
    }

    /// Each start reaches Redis 600 ms after it was called: the other member's start comes
    /// after the first one's 500 ms countdown.
    final class SlowStarts: ForwardingScheduler, @unchecked Sendable {
        override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
            throws(CountdownError) -> CountdownStart
        {
            Thread.sleep(forTimeInterval: 0.6)
            return try inner.start(key: key, duration: duration, observer: observer)
        }
    }

    static func run(_ id: String, _ wrap: @escaping @Sendable (any CountdownScheduler) -> any CountdownScheduler) throws -> CheckResult {
        let check = try #require(CountdownConformance.checks.first { $0.id == id })
        let endpoint = try TestRedis.server().endpoint
        return CountdownConformance(name: "redis(zset), slow calls") { environment in
            wrap(try RedisCountdownScheduler(
                endpoint: endpoint, namespace: environment.namespace, tickInterval: environment.tickInterval,
                deliveryQueue: environment.deliveryQueue))
        }.run(check)
    }

    @Test("fleet.cancel: a cancel that came after the countdown's deadline is done again, not failed")
    func cancelAfterTheDeadline() throws {
        let result = try Self.run("fleet.cancel") { SlowRemaining($0) }
        #expect(result.verdict == .pass, "\(result.messages) — \(result.figure ?? "")")
        #expect(result.figure?.contains("lengthened") == true, "the premise did not fail: \(result.figure ?? "")")
    }

    @Test("fleet.attach: a start that came after the countdown's deadline is done again, not failed")
    func attachAfterTheDeadline() throws {
        let result = try Self.run("fleet.attach") { SlowStarts($0) }
        #expect(result.verdict == .pass, "\(result.messages) — \(result.figure ?? "")")
        // Lengthened once or, on a loaded machine, twice: never judged on the first 500 ms.
        #expect(result.figure?.contains("left of") == true && result.figure?.contains("left of 0.5") == false,
                "the premise did not fail: \(result.figure ?? "")")
    }
}
#endif
