import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Testing

/// Every built-in backend made for the conformance suite: the suite's tick, queue and wall clock.
func conformance(_ backend: CountdownBackend, seed: UInt64? = nil) -> CountdownConformance {
    var options = CountdownConformance.Options(randomizedOperations: 2000, timeLimitPerCheck: .seconds(60))
    if let seed { options.seed = seed }
    return CountdownConformance(name: backend.description, options: options) { environment in
        try backend.makeScheduler(.init(environment))
    }
}

/// Runs `check` on `suite` once one of the test process's ``CheckSlots`` is free.
func runInSlot(_ suite: CountdownConformance, _ check: ConformanceCheck) async -> CheckResult {
    await CheckSlots.shared.run { suite.run(check) }
}

/// Checks whose verdict rests on timing that ThreadSanitizer distorts.
func distortedByThreadSanitizer(_ check: ConformanceCheck) -> Bool {
    ThreadSanitizer.acquire != nil && ["profile.drift", "profile.slow-observer"].contains(check.id)
}

/// The matrix's backends: every built-in one, but under ThreadSanitizer, which is there to find
/// races, each set of threads and locks once: `timestamp(wall)` runs `timestamp(continuous)`'s
/// reading another clock, `dispatch-source(compensated)` runs `dispatch-source`'s computing
/// another interval. The plain `swift test` of the same CI run judges them, and ThreadSanitizer
/// slows each case several times over, one at a time (the matrix took 4.3 of CI's 18.7 minutes).
let conformanceMatrixBackends = ThreadSanitizer.acquire == nil
    ? allBackends
    : allBackends.filter { !["timestamp(wall)", "dispatch-source(compensated)"].contains($0.description) }

/// The matrix's checks: every one, but under ThreadSanitizer not those whose verdict rests on
/// timing it distorts (``distortedByThreadSanitizer(_:)``): the plain run asserts them.
let conformanceMatrixChecks = CountdownConformance.checks.filter { !distortedByThreadSanitizer($0) }

/// The whole suite, on every backend: one test case per check and backend.
@Suite("Conformance", .dedicatedThread, .timeLimit(.minutes(3)))
struct ConformanceTests {
    @Test("built-in backends pass every check", arguments: conformanceMatrixBackends, conformanceMatrixChecks)
    func builtInBackend(backend: CountdownBackend, check: ConformanceCheck) async {
        let result = await runInSlot(conformance(backend), check)
        #expect(result.verdict != .fail, "\(check.id) on \(backend): \(result.messages.joined(separator: "; "))")
        // Everything built in is clear-cut: no check may shrug (replay judges virtual time only;
        // the fleet checks, a fleet: these backends' countdowns are their own).
        // A backend made with its store already restored cannot be given another: the store checks shrug.
        let keepsAStore = check.id.hasPrefix("store.") && CountdownBackend.storedOnes.contains { $0.description == backend.description }
        let expected: CheckResult.Verdict =
            check.id == "replay" || CountdownConformance.fleetChecks.contains(check) || keepsAStore ? .notApplicable : .pass
        #expect(result.verdict == expected, "\(check.id) on \(backend) was \(result.verdict.rawValue): \(result.messages)")
        #expect(result.time == .real)
    }

    /// The virtual scheduler, judged in virtual time in a `countdown-bench conformance` child
    /// process: every contract check passes (the store's on a store kept on its clock), the
    /// profile checks say they need the real world.
    /// Not in this process: virtual time runs flat out, and beside it the real-time checks here
    /// saw their deliveries stall for seconds (two full runs in three failed so).
    @Test("the virtual scheduler passes every contract check in virtual time, in a process of its own", .timeLimit(.minutes(2)))
    func virtualSchedulerInAProcessOfItsOwn() throws {
        let (status, text) = try runBench(["conformance", "--backend", "virtual", "--format", "json", "--no-progress"], nice: true)
        #expect(status == 0, "countdown-bench conformance --backend virtual:\n\(text)")
        let document = try JSONDecoder().decode(ConformanceDocument.self, from: Data(text.utf8))
        let results = try #require(document.reports.first?.results)
        #expect(results.count == CountdownConformance.checks.count)
        for result in results {
            #expect(result.time == .virtual, "\(result.id)")
            let isFleetCheck = CountdownConformance.fleetChecks.contains { $0.id == result.id }
            let expected: CheckResult.Verdict = result.kind == .contract && !isFleetCheck ? .pass : .notApplicable
            #expect(result.verdict == expected, "\(result.id) in virtual time was \(result.verdict.rawValue): \(result.messages)")
        }
    }

    /// The recommended backend writing every change to a `CountdownStore` in the background:
    /// the writes change nothing the contract promises (a finish waits for its write, in
    /// order). The contract's checks: its profile is the backend's own, judged above, and the
    /// profile checks' timing is what a test run beside everything else disturbs most.
    @Test("a backend keeping a store keeps the contract", arguments: CountdownBackend.storedOnes,
          CountdownConformance.checks.filter { $0.kind == .contract })
    func storedBackend(backend: CountdownBackend, check: ConformanceCheck) async {
        await builtInBackend(backend: backend, check: check)
    }

    /// The default `task` backend, judged where nothing else shares its pool: a
    /// `countdown-bench conformance` child process (the debug build beside this test binary).
    /// In this process, the operation-queue tests running at the same time would keep its
    /// wake-ups waiting for a pool thread (see `allBackends`).
    @Test("task passes every check in a process of its own", .runsAlone, .timeLimit(.minutes(5)))
    func taskInAProcessOfItsOwn() throws {
        let (status, text) = try runBench(["conformance", "--backend", "task", "--no-progress"])
        #expect(status == 0, "countdown-bench conformance --backend task:\n\(text)")
        #expect(text.contains("events") && !text.contains("fail"), "\(text)")
    }

    /// Runs the debug `countdown-bench` beside this test binary; its status and what it printed
    /// on standard output.
    /// `nice`: at the lowest priority, for one that runs flat out (virtual time).
    private func runBench(_ arguments: [String], nice: Bool = false) throws -> (Int32, String) {
        let executable = SuspendTests.executable
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "no \(executable.path)")
        let process = Process()
        process.executableURL = nice ? URL(fileURLWithPath: "/usr/bin/nice") : executable
        process.arguments = nice ? ["-n", "19", executable.path] + arguments : arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test("every check has a unique id and a summary")
    func catalogue() {
        let ids = CountdownConformance.checks.map(\.id)
        #expect(Set(ids).count == ids.count)
        #expect(CountdownConformance.checks.allSatisfy { !$0.summary.isEmpty })
        // The contract's checks, the store's and the fleet's among them; the profile's four
        // (and the suspension claim, run apart by `suspension(relaunch:)`).
        let contract = CountdownConformance.checks.filter { $0.kind == .contract }
        #expect(contract.count == CountdownConformance.checks.count - 4, "\(CountdownConformance.checks.filter { $0.kind == .profile }.map(\.id))")
        #expect(Set(CountdownConformance.checks.filter { $0.kind == .profile }.map(\.id))
            == ["profile.wall-clock", "profile.slow-observer", "profile.drift", "profile.capacity"])
        #expect(Set(["store.finish", "store.restore", "store.wait", "store.bad-file"]).isSubset(of: Set(contract.map(\.id))))
        #expect(Set(CountdownConformance.fleetChecks.map(\.id)).isSubset(of: Set(contract.map(\.id))))
    }
}

extension ConformanceCheck: CustomTestStringConvertible {
    public var testDescription: String { id }
}
