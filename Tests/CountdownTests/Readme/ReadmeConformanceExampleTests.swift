// The README's "Run the suite on your own backend" example, compiled and run as written
// (with TimestampScheduler standing in for "your" backend).

// README conformance example begins
import Countdown
import CountdownConformance
import Testing

@Test func myBackendMeetsTheContract() {
    let suite = CountdownConformance(name: "my-backend") { environment in
        // Make a fresh scheduler with what the suite hands you: its tick interval, its delivery
        // queue, and a wall clock it can move (use it if your backend reads the wall clock).
        try TimestampScheduler(
            tickInterval: environment.tickInterval,
            clock: environment.wallClock,
            deliveryQueue: environment.deliveryQueue)
    }
    let report = suite.run(concurrency: 4)
    #expect(report.passed, "\(report)")  // the report lists every check, and every failure
}
// README conformance example ends

/// Its child process runs in a stage of its own (`.runsAlone`, on the suite, so that the test
/// reads as the article shows it).
@Suite(.runsAlone) struct SuspensionClaimExample {
    // README suspension example begins
    @Test func myBackendKeepsItsSuspensionClaim() {
        let suite = CountdownConformance(name: "my-backend") { environment in
            try TimestampScheduler(tickInterval: environment.tickInterval, deliveryQueue: environment.deliveryQueue)
        }
        // Runs this test again in a child process, freezes it with SIGSTOP, and judges the claim.
        let result = suite.suspension(relaunch: .swiftTesting("myBackendKeepsItsSuspensionClaim"))
        #expect(result.verdict != .fail, "\(result.figure ?? "") \(result.messages)")
    }
    // README suspension example ends
}
