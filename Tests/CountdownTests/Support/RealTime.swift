import CountdownConformance
import Foundation

@testable import CountdownConformance

// Waits of the tests' own, in real time: the conformance suite's checks wait through their
// scheduler's time instead (real or virtual).

/// Polls `condition` until it holds or `timeout` passes, in real time.
func waitUntil(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    realTimeWait(timeout: timeout, condition)
}

/// Lets real time pass on the test's thread.
func settle(_ duration: Duration) {
    Thread.sleep(forTimeInterval: max(duration.seconds, 0))
}
