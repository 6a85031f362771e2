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
    /// Every broken backend against the check aimed at it, six at a time on threads of their
    /// own; the score is how many that check rejected, and the target is all of them. Caught
    /// by another check (the randomized one, say) counts as a miss.
    @Test("score: every broken backend is rejected by the check aimed at it")
    func score() throws {
        let results = Locked<[String: CheckResult]>([:])
        let slots = DispatchSemaphore(value: 6)
        let done = DispatchGroup()
        for broken in BrokenBackend.all {
            let check = try #require(CountdownConformance.checks.first { $0.id == broken.rejectedBy })
            slots.wait()
            done.enter()
            Thread {
                defer { slots.signal(); done.leave() }
                let suite = CountdownConformance(
                    name: broken.name, options: .init(timeLimitPerCheck: .seconds(40)), makeScheduler: broken.make)
                let result = suite.run(check)
                results.withLock { $0[broken.name] = result }
            }.start()
        }
        done.wait()
        let all = results.withLock { $0 }
        var rejected = 0, judged = 0
        for broken in BrokenBackend.all {
            let check = try #require(CountdownConformance.checks.first { $0.id == broken.rejectedBy })
            guard !distortedByThreadSanitizer(check), let result = all[broken.name] else { continue }  // see ConformanceTests
            judged += 1
            if result.verdict == .fail { rejected += 1 }
            #expect(result.verdict == .fail, "\(broken.name) passed \(check.id): \(result.messages) — \(result.figure ?? "")")
            #expect(result.verdict != .fail || !result.messages.isEmpty, "\(broken.name): a failure without a message")
        }
        print("conformance score: \(rejected) of \(judged) broken backends rejected by the check aimed at them")
        #expect(rejected == judged)
    }

    @Test("every contract check has a broken backend aimed at it")
    func coverage() {
        let aimed = Set(BrokenBackend.all.map(\.rejectedBy))
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
