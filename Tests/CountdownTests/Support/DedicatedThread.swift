import CountdownSupport
import Foundation
import Dispatch
import Testing

/// Runs each test's jobs on a serial dispatch queue of its own.
///
/// Why: on Linux, Swift concurrency's executor and `OperationQueue` draw threads from the same
/// width-limited libdispatch pool (two threads on two cores). The operation-queue backend parks
/// one of them per sleeping countdown, and the pool grows only about one thread a second, so
/// without this a test's own `Task.sleep` can resume seconds late — the very starvation the
/// benchmark measures. A serial queue always gets a thread (it is overcommit), so the tests'
/// waits, pauses and watchdogs keep time whatever the backend under test does to the pool.
struct DedicatedThread: TestTrait, SuiteTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(SerialQueueExecutor(label: "countdown.tests.\(test.name)")) {
            try await function()
        }
    }
}

extension Trait where Self == DedicatedThread {
    static var dedicatedThread: Self { DedicatedThread() }
}

/// The stage a test runs in. `swift test` runs the engine's tests, the matrix of the suite on
/// every backend, and the rest, in one parallel run. Tests that start child processes
/// (relaunched test binaries, `countdown-bench` workers, libfaketime), run the benchmark's
/// measured runs, or judge fifty broken backends in real time are left to a stage of their
/// own, where nothing runs beside them: `COUNTDOWN_TEST_STAGE=alone swift test --filter <theirs>`
/// (`.ci/run` runs both stages).
enum TestStage {
    static let variable = "COUNTDOWN_TEST_STAGE"
    static var runsAlone: Bool { ProcessInfo.processInfo.environment[variable] == "alone" }
}

extension Trait where Self == ConditionTrait {
    /// Runs only in the stage of its own (see ``TestStage``).
    static var runsAlone: Self {
        .enabled(if: TestStage.runsAlone, "runs in a stage of its own: COUNTDOWN_TEST_STAGE=alone (.ci/run)")
    }
}
