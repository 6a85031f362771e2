import Countdown
@testable import CountdownBenchKit
import Dispatch
import Testing

// The tests use the conformance suite's own harness (Recorder, DeliveryQueue, waitUntil,
// settle, monotonicNow, ClockAllowance) rather than a copy of it.
@testable import CountdownConformance

/// Every built-in backend, for parameterized tests run in parallel, but `task` on the global
/// executor: beside the operation-queue backend's sleeping workers, which tests running at the
/// same time start by the hundred, its wake-ups wait seconds for a thread of the pool they
/// block (the interference `countdown-bench run` measures), and timed checks would judge that.
/// It is judged in a process of its own (`ConformanceTests.taskInAProcessOfItsOwn`), and by
/// `countdown-bench conformance`, which runs one backend at a time, in CI as in results/.
let allBackends = CountdownBackend.allWithVariants.filter { $0.description != "task" }

extension CountdownBackend: CustomTestStringConvertible {
    public var testDescription: String { description }
}

/// Records one observer's events, delivered on a queue of its own.
func recorder() -> Recorder { Recorder(DeliveryQueue(), time: .real) }

/// Checks what every observer's event list must satisfy, whatever happened around it, by the
/// suite's own rules (`EventRules`): ticks positive and never increasing, at most one finish,
/// and nothing after it. Each breach is an issue of its own.
func expectWellFormed(_ records: [Recorder.Record], _ label: String = "",
                      sourceLocation: SourceLocation = #_sourceLocation) {
    for violation in EventRules.violations(of: records, label) {
        Issue.record(Comment(rawValue: violation), sourceLocation: sourceLocation)
    }
}
