import Countdown
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Testing

/// The suite must reject what breaks the contract: each broken backend fails the check aimed
/// at it. A suite whose checks could not fail would pass these backends.
@Suite("Broken backends", .dedicatedThread, .timeLimit(.minutes(10)))
struct BrokenBackendTests {
    /// Every broken backend against the check aimed at it, in the test process's check slots;
    /// the score is how many that check rejected, and the target is all of them. Caught by
    /// another check (the randomized one, say) counts as a miss.
    @Test("score: every broken backend is rejected by the check aimed at it", .runsAlone)
    func score() async throws {
        let results = Locked<[String: CheckResult]>([:])
        // In the check slots (the stage of its own runs nothing else in them).
        let aimed = BrokenBackend.all.filter(\.inRealTime).flatMap(\.aimedAt)
        await withTaskGroup(of: Void.self) { group in
            for (broken, id, label) in aimed {
                guard let check = CountdownConformance.checks.first(where: { $0.id == id }) else { continue }
                group.addTask {
                    let suite = CountdownConformance(
                        name: broken.name, options: .init(timeLimitPerCheck: .seconds(40)), makeScheduler: broken.make)
                    let result = await runInSlot(suite, check)
                    results.withLock { $0[label] = result }
                }
            }
        }
        let all = results.withLock { $0 }
        var rejected = 0, judged = 0
        for (_, id, label) in aimed {
            let check = try #require(CountdownConformance.checks.first { $0.id == id })
            guard !distortedByThreadSanitizer(check), let result = all[label] else { continue }  // see ConformanceTests
            judged += 1
            if result.verdict == .fail { rejected += 1 }
            #expect(result.verdict == .fail, "\(label) passed \(check.id): \(result.messages) — \(result.figure ?? "")")
            #expect(result.verdict != .fail || !result.messages.isEmpty, "\(label): a failure without a message")
        }
        print("conformance score: \(rejected) of \(judged) broken backends rejected by the checks aimed at them (a backend aimed at several counted once for each)")
        #expect(rejected == judged)
    }

    /// The same, in virtual time: every broken backend built on the keyed table, over the
    /// virtual scheduler, against the check aimed at it, judged in virtual time. A miss is
    /// reported by name.
    /// Virtual time runs flat out; beside it, the real-time checks of the other suites saw their
    /// deliveries stall for seconds. So the tests that judge in virtual time run in a process of
    /// their own: this test binary, started again with only them (and told so).
    static let virtualTimeVariable = "COUNTDOWN_TESTS_VIRTUAL_TIME"
    static var inVirtualTimeProcess: Bool { ProcessInfo.processInfo.environment[virtualTimeVariable] != nil }

    @Test("the verdicts in virtual time, in a process of their own", .runsAlone, .timeLimit(.minutes(5)),
          .enabled(if: ThreadSanitizer.acquire == nil, "verdicts are the plain run's"))
    func virtualTimeInAProcessOfItsOwn() throws {
        guard !Self.inVirtualTimeProcess else { return }
        let process = Process()
        // At the lowest priority: it runs flat out, and must leave the machine to the real-time
        // tests running meanwhile (the store's writer, at utility QoS, starved beside it).
        process.executableURL = URL(fileURLWithPath: "/usr/bin/nice")
        process.arguments = ["-n", "19", CountdownConformance.Relaunch.currentExecutable,
                             "--testing-library", "swift-testing", "--filter", "BrokenBackendTests/(scoreInVirtualTime|simulationReplaysFromItsSeed)"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.virtualTimeVariable] = "1"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "the virtual-time tests failed:\n\(text.suffix(4000))")
        #expect(text.contains("Test run with 2 tests"), "\(text.suffix(2000))")
        for line in text.split(separator: "\n") where line.hasPrefix("conformance score in virtual time") || line.hasPrefix("replayed") {
            print(line)
        }
    }

    /// Run by ``virtualTimeInAProcessOfItsOwn()`` in a child process.
    @Test("score in virtual time: every broken backend built on the table is rejected by its check",
          .enabled(if: inVirtualTimeProcess, "run in a process of its own"))
    func scoreInVirtualTime() throws {
        let candidates = BrokenBackend.all.filter { $0.makeInVirtualTime != nil }.flatMap(\.aimedAt)
        let results = Locked<[String: CheckResult]>([:])
        // One at a time, in a process of their own (see virtualTimeInAProcessOfItsOwn).
        let slots = DispatchSemaphore(value: 1)
        let done = DispatchGroup()
        for (broken, id, label) in candidates {
            let check = try #require(CountdownConformance.checks.first { $0.id == id })
            let make = try #require(broken.makeInVirtualTime)
            slots.wait()
            done.enter()
            Thread {
                defer { slots.signal(); done.leave() }
                // In virtual time nothing waits for real time: a check still running after 20 s hangs.
                let suite = CountdownConformance(name: broken.name, options: .init(timeLimitPerCheck: .seconds(20)), makeScheduler: make)
                let result = suite.run(check)
                results.withLock { $0[label] = result }
            }.start()
        }
        done.wait()
        let all = results.withLock { $0 }
        var misses: [String] = []
        for (_, id, label) in candidates {
            let result = try #require(all[label])
            #expect(result.time == .virtual, "\(label): \(id) ran in \(result.time) time")
            if result.verdict != .fail { misses.append("\(label) (\(id): \(result.verdict.rawValue))") }
            #expect(result.verdict != .fail || !result.messages.isEmpty, "\(label): a failure without a message")
        }
        print("conformance score in virtual time: \(candidates.count - misses.count) of \(candidates.count) broken backends rejected by the checks aimed at them (a backend aimed at several counted once for each)")
        #expect(misses.isEmpty, "passed in virtual time: \(misses.joined(separator: "; "))")
        #expect(candidates.count >= 30)
    }

    /// A failing simulation prints its seed and the shortest sequence it found; the same seed
    /// replays it exactly: the same messages, the same sequence.
    @Test("a failing simulation replays from its printed seed", .enabled(if: inVirtualTimeProcess, "run in a process of its own"))
    func simulationReplaysFromItsSeed() throws {
        let check = try #require(CountdownConformance.checks.first { $0.id == "randomized" })
        let broken = try #require(BrokenBackend.all.first { $0.rejectedBy == "randomized" }?.makeInVirtualTime)
        func run(seed: UInt64) -> CheckResult {
            CountdownConformance(name: "restarts paused after a cancel", options: .init(seed: seed, randomizedOperations: 5_000),
                                 makeScheduler: broken).run(check)
        }
        let first = run(seed: 20_261_124)
        #expect(first.verdict == .fail)
        let shortest = try #require(first.messages.first { $0.contains("the shortest failing sequence") })
        #expect(shortest.contains("seed 20261124") && shortest.contains("--seed 20261124"), "\(shortest)")
        let again = run(seed: 20_261_124)
        #expect(again.messages == first.messages, "the same seed did not replay the same failure")
        print("replayed: \(shortest)")
    }

    @Test("every contract check has a broken backend aimed at it")
    func coverage() {
        // The checks that run a fleet's members in processes of their own need a fleet backend
        // that can: the Redis strategies. Their broken backends are BrokenFleetBackendTests,
        // built and run with the Redis trait (CI's Redis stage); without it, they are named here.
        #if Redis
        let acrossProcesses = Set(BrokenFleetBackendTests.all.map(\.rejectedBy))
        #else
        let acrossProcesses: Set = ["fleet.race", "fleet.faults", "fleet.kill"]
        #endif
        let aimed = Set(BrokenBackend.all.map(\.rejectedBy)).union(acrossProcesses)
        let checks = Set(CountdownConformance.checks.map(\.id))
        #expect(checks.subtracting(aimed).isEmpty, "no broken backend for \(checks.subtracting(aimed).sorted())")
    }

    @Test("the randomized model judges a key free from inside its finish's own callback")
    func randomizedJudgesAtTheFinish() throws {
        let check = try #require(CountdownConformance.checks.first { $0.id == "randomized" })
        let suite = CountdownConformance(name: "lists finished keys") { ListsFinishedKeys(try dispatchSource($0)) }
        let result = suite.run(check)
        #expect(result.verdict == .fail, "\(result.messages)")
        #expect(result.messages.contains { $0.contains("in its finish's own callback activeKeys still listed the key") }, "\(result.messages.prefix(3))")
    }

    @Test("every failure is reported, not only the first")
    func everyFailureReported() throws {
        let check = try #require(CountdownConformance.checks.first { $0.id == "finish" })
        let suite = CountdownConformance(name: "finishes twice") { FinishesTwice(try dispatchSource($0)) }
        let result = suite.run(check)
        // Two countdowns, each finishing twice: one message for each.
        #expect(result.messages.filter { $0.contains("2 finishes") }.count == 2, "\(result.messages)")
    }
}
