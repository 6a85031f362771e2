import Foundation
import Testing

@testable import CountdownBench

@Suite(.dedicatedThread) struct CompareCommandTests {
    /// A run of one configuration whose repeats had these p99s and this CPU.
    func document(p99s: [Double], cpu: Double = 10) -> RunDocument {
        let repeats = p99s.map { p99 in
            RunDocument.Repeat(
                figures: [Figure.tickP99.name: p99, Figure.cpu.name: cpu], atLeast: [], outcome: "complete",
                counts: .init(
                    countdowns: 10, started: 10, finished: 10, notStarted: 0, neverTicked: 0, ticks: 40,
                    skippedTicks: 0, repeatedGridPoints: 0, earlyEvents: 0, earlyFinishes: 0, doubledFinishes: 0, eventsAfterFinish: 0, startErrors: [:],
                    startPhaseMs: 1, windowMs: 1000, hitTimeLimit: false, baselineThreads: 4, peakThreads: 6, earliestMs: 0, churnFilled: 10,
                    churnFillMs: 1),
                histograms: .init(tickLateness: .init(), finishError: .init(), startDelay: .init()))
        }
        var summary: [String: Spread] = [:]
        summary[Figure.tickP99.name] = Spread(p99s)
        summary[Figure.cpu.name] = Spread(p99s.map { _ in cpu })
        return RunDocument(
            machine: Machine(cpuModel: "test CPU", cores: 2, kernel: "test", swiftVersion: "6.3", buildConfiguration: "release"),
            date: "2026-11-22T00:00:00Z", arguments: ["run"],
            options: .init(
                backends: ["dispatch-source"], counts: [10], starts: [.spread], tickMs: 200, durationMs: 1000, repeats: p99s.count,
                graceMs: 1000, floorPeriodUs: 1000, floorWakeUps: 10, churnSamples: 10),
            floor: .init(repeats: [], summary: [:], histogram: .init()),
            configurations: [.init(
                backend: "dispatch-source", starts: .spread, count: 10, summary: summary, atLeast: [],
                outcome: "complete", repeats: repeats)])
    }

    func compare(_ old: RunDocument, _ new: RunDocument, _ extra: [String] = []) throws -> Int32 {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("compare-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let oldURL = folder.appendingPathComponent("old.json"), newURL = folder.appendingPathComponent("new.json")
        try RunCommand.json(old).write(to: oldURL, atomically: true, encoding: .utf8)
        try RunCommand.json(new).write(to: newURL, atomically: true, encoding: .utf8)
        var output = StandardStreams(capturing: true)
        return try CompareCommand(arguments: [oldURL.path, newURL.path] + extra).run(&output)
    }

    @Test func exitStatusSaysWhatChanged() throws {
        let base = document(p99s: [1.0, 1.1, 1.2])
        #expect(try compare(base, base) == 0, "the same run: nothing changed")
        #expect(try compare(base, document(p99s: [2.0, 2.1, 2.2])) == 2, "p99 doubled: a regression")
        #expect(try compare(base, document(p99s: [0.4, 0.5, 0.6])) == 4, "p99 halved: improvements only")
        #expect(try compare(base, document(p99s: [1.0, 1.1, 1.2], cpu: 30)) == 2, "CPU tripled: a regression")
    }

    @Test func noiseAndOverlapAreNotRegressions() throws {
        let base = document(p99s: [1.0, 1.1, 1.2])
        #expect(try compare(base, document(p99s: [1.05, 1.15, 1.25])) == 0, "+0.05 ms is below the 0.2 ms noise floor")
        #expect(try compare(base, document(p99s: [0.9, 1.6, 1.7])) == 0, "repeats overlap: not shown to be worse")
        #expect(try compare(document(p99s: [1.0]), document(p99s: [1.6]), ["--threshold", "100"]) == 0,
                "+60 % is within a 100 % threshold")
        #expect(try compare(document(p99s: [1.0]), document(p99s: [1.6])) == 2, "one repeat each: the medians decide")
    }

    @Test func unreadableFilesAndBadArgumentsAreRefused() throws {
        #expect(throws: UsageError.self) { try CompareCommand(arguments: ["only-one.json"]) }
        #expect(throws: UsageError.self) { try CompareCommand(arguments: ["a.json", "b.json", "--threshold", "-3"]) }
        var output = StandardStreams(capturing: true)
        #expect(throws: CompareError.self) {
            try CompareCommand(arguments: ["/nonexistent/a.json", "/nonexistent/b.json"]).run(&output)
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("compare-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let other = folder.appendingPathComponent("other.json")
        try #"{"format": "something-else", "version": 1}"#.write(to: other, atomically: true, encoding: .utf8)
        #expect(throws: CompareError.self) { try CompareCommand(arguments: [other.path, other.path]).run(&output) }
    }
}
