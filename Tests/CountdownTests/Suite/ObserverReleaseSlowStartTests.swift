@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import Foundation
import Testing

/// `observer-release` once failed a correct backend in CI's sanitized run: "observers were
/// released while in use". Its 40 ms countdown had finished, and been let go, before the check
/// looked: three starts took that long. A countdown that finished is not in use.
@Suite(.dedicatedThread)
struct ObserverReleaseSlowStartTests {
    /// dispatch-source, each start 30 ms slow: the 40 ms countdown ends before the third returns.
    final class SlowStarts: Forwarding, @unchecked Sendable {
        override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
            throws(CountdownError) -> CountdownStart
        {
            let outcome = try inner.start(key: key, duration: duration, observer: observer)
            Thread.sleep(forTimeInterval: 0.03)
            return outcome
        }
    }

    @Test("a countdown that finished before the check looked was not released in use")
    func finishedBeforeTheCheckLooked() throws {
        let check = try #require(CountdownConformance.checks.first { $0.id == "observer-release" })
        let result = CountdownConformance(name: "slow starts") { SlowStarts(try dispatchSource($0)) }.run(check)
        #expect(result.verdict == .pass, "\(result.messages)")
    }
}
