import Countdown
import CountdownConformance
import Testing

/// The suite must reject what breaks the contract: each broken backend fails the check aimed
/// at it. A suite whose checks could not fail would pass these backends.
@Suite("Broken backends", .dedicatedThread, .timeLimit(.minutes(3)))
struct BrokenBackendTests {
    @Test("each broken backend is rejected by the check aimed at it", arguments: BrokenBackend.all)
    func rejected(broken: BrokenBackend) throws {
        let check = try #require(CountdownConformance.checks.first { $0.id == broken.rejectedBy })
        let suite = CountdownConformance(
            name: broken.name, options: .init(timeLimitPerCheck: .seconds(40)), makeScheduler: broken.make)
        let result = suite.run(check)
        guard !distortedByThreadSanitizer(check) else { return }  // see ConformanceTests
        #expect(result.verdict == .fail, "\(broken.name) passed \(check.id): \(result.messages) — \(result.figure ?? "")")
        #expect(!result.messages.isEmpty, "a failure without a message")
    }

    @Test("every contract check has a broken backend aimed at it")
    func coverage() {
        let aimed = Set(BrokenBackend.all.map(\.rejectedBy))
        let checks = Set(CountdownConformance.checks.map(\.id))
        #expect(checks.subtracting(aimed).isEmpty, "no broken backend for \(checks.subtracting(aimed).sorted())")
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
