import Foundation
import Testing

@testable import CountdownBenchKit

@Suite(.dedicatedThread) struct CompareCommandTests {
    /// A run of one configuration whose repeats had these p99s and this CPU.
    func document(p99s: [Double], cpu: Double = 10, floorWakeUp: Double = 12, samples: Int = 2000) -> RunDocument {
        let wakeUp = 24.0, ratio = wakeUp / floorWakeUp
        let repeats = p99s.map { p99 in
            RunDocument.Repeat(
                figures: [.tickP99: p99, .cpu: cpu, .floorCPUPerWakeUp: floorWakeUp, .cpuPerWakeUp: wakeUp, .wakeUpFloorRatio: ratio],
                lowerBounds: [], outcome: .complete,
                counts: .init(
                    countdowns: 10, started: 10, finished: 10, notStarted: 0, neverTicked: 0, ticks: 40,
                    repeatedGridPoints: 0, startPhaseMs: 1, windowMs: 1000, rounds: 1, hitTimeLimit: false,
                    baselineThreads: 4, peakThreads: 6, churnFilled: 10, churnFillMs: 1),
                load: nil, windowFloorP99: nil)
        }
        let p99 = Spread(p99s)!
        let multiple = p99s.count > 1
        let figures: [Figure: FigureValue] = [
            .tickP99: .init(value: p99.median, samples: samples, isLowerBound: false, isResolved: samples >= 100, repeats: multiple ? p99 : nil),
            .cpu: .init(value: cpu, samples: p99s.count, isLowerBound: false, isResolved: true, repeats: multiple ? Spread(p99s.map { _ in cpu }) : nil),
            .floorCPUPerWakeUp: .init(
                value: floorWakeUp, samples: p99s.count, isLowerBound: false, isResolved: true,
                repeats: multiple ? Spread(p99s.map { _ in floorWakeUp }) : nil),
            .cpuPerWakeUp: .init(
                value: wakeUp, samples: p99s.count, isLowerBound: false, isResolved: true,
                repeats: multiple ? Spread(p99s.map { _ in wakeUp }) : nil),
            .wakeUpFloorRatio: .init(
                value: ratio, samples: p99s.count, isLowerBound: false, isResolved: true,
                repeats: multiple ? Spread(p99s.map { _ in ratio }) : nil),
        ]
        return RunDocument(
            machine: Machine(cpuModel: "test CPU", cores: 2, kernel: "test", swiftVersion: "6.3", buildConfiguration: "release"),
            date: "2026-11-22T00:00:00Z", arguments: ["run"],
            options: .init(
                backends: ["dispatch-source"], counts: [10], starts: [.spread], tickMs: 200, durationMs: 1000, repeats: p99s.count,
                graceMs: 1000, floorPeriodUs: 1000, floorWakeUps: 10, churnSamples: 10, minimumTickSamples: 2000),
            floor: .init(summary: LatencySummary(LatencyHistogram()), repeatP99s: [], histogram: .init()),
            load: nil,
            configurations: [.init(
                backend: "dispatch-source", starts: .spread, count: 10, rounds: 1, figures: figures, outcome: .complete,
                isNoisy: multiple && p99.ratio > 2, isDisturbed: false, windowFloor: nil, load: nil, repeats: repeats, histograms: nil)])
    }

    func compare(_ old: RunDocument, _ new: RunDocument, _ extra: [String] = []) throws -> Int32 {
        var output = StandardStreams(capturing: true)
        return try compare(old, new, extra, output: &output)
    }

    func compare(_ old: RunDocument, _ new: RunDocument, _ extra: [String] = [], output: inout StandardStreams) throws -> Int32 {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("compare-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let oldURL = folder.appendingPathComponent("old.json"), newURL = folder.appendingPathComponent("new.json")
        try RunDocumentFile.encode(old).write(to: oldURL, atomically: true, encoding: .utf8)
        try RunDocumentFile.encode(new).write(to: newURL, atomically: true, encoding: .utf8)
        return try CompareCommand(arguments: [oldURL.path, newURL.path] + extra).run(&output)
    }

    @Test func exitStatusSaysWhatChanged() throws {
        let base = document(p99s: [1.0, 1.1, 1.2])
        #expect(try compare(base, base) == 0, "the same run: nothing changed")
        #expect(try compare(base, document(p99s: [2.0, 2.1, 2.2])) == 2, "p99 doubled: a regression")
        #expect(try compare(base, document(p99s: [0.4, 0.5, 0.6])) == 4, "p99 halved: improvements only")
        #expect(try compare(base, document(p99s: [1.0, 1.1, 1.2], cpu: 30)) == 2, "CPU tripled: a regression")
    }

    @Test func theMachinesMemoryIsNotedAndDecidesNothing() throws {
        var quiet = document(p99s: [1.0, 1.1, 1.2]), thrashed = quiet
        quiet.memory = MemoryLatency(smallSetBytes: 4 << 20, largeSetBytes: 64 << 20, smallSetNs: [12, 13, 12], largeSetNs: [150, 152, 151])
        thrashed.memory = MemoryLatency(smallSetBytes: 4 << 20, largeSetBytes: 64 << 20, smallSetNs: [90, 150, 120], largeSetNs: [220, 270, 245])
        var output = StandardStreams(capturing: true)
        #expect(try compare(quiet, thrashed, output: &output) == 0, "the same figures on a slower memory: nothing regressed")
        #expect(output.captured?.contains("note: the machine's memory differed") == true, "\(output.captured ?? "")")
        var again = StandardStreams(capturing: true)
        #expect(try compare(quiet, quiet, output: &again) == 0)
        #expect(again.captured?.contains("memory") == false, "the same memory: no note")
        #expect(TextRunReport(document: thrashed, isTerminal: false).render().contains("memory alone (one dependent load at a time"))
        #expect(MarkdownRunReport(document: thrashed, neighbours: []).render().contains("4 MiB 120 ns (90–150), 64 MiB 245 ns (220–270) a load"))
    }

    @Test func noiseAndOverlapAreNotRegressions() throws {
        let base = document(p99s: [1.0, 1.1, 1.2])
        #expect(try compare(base, document(p99s: [1.05, 1.15, 1.25])) == 0, "+0.05 ms is below the 0.2 ms noise floor")
        #expect(try compare(base, document(p99s: [0.9, 1.6, 1.7])) == 0, "repeats overlap: not shown to be worse")
        #expect(try compare(document(p99s: [1.0]), document(p99s: [1.6]), ["--threshold", "100"]) == 0,
                "+60 % is within a 100 % threshold")
        #expect(try compare(document(p99s: [1.0]), document(p99s: [1.6])) == 2, "one repeat each: the medians decide")
        #expect(try compare(document(p99s: [1.0], samples: 40), document(p99s: [1.6], samples: 40)) == 0,
                "a p99 of 40 samples is not resolved: shown, never a regression")
        #expect(try compare(base, document(p99s: [1.0, 4.0, 4.2])) == 0, "noisy repeats (1 ms to 4.2 ms) decide nothing")
        #expect(try compare(base, document(p99s: [1.0, 1.1, 1.2], floorWakeUp: 36)) == 0,
                "the machine's own wake-up cost tripled: shown, never the backend's regression")
        var output = StandardStreams(capturing: true)
        #expect(try compare(base, document(p99s: [1.0, 1.1, 1.2], floorWakeUp: 6), output: &output) == 0,
                "the machine's wake-up cost halved, the backend's the same: the ratio doubled, and is not a regression")
        #expect(output.captured?.contains("over the machine's") == true, "\(output.captured ?? "")")
    }

    /// Version 1 files (pretty-printed, figures as medians by name, histograms per repeat) are
    /// still read: pooled percentiles come from their histograms.
    @Test func versionOneFilesAreStillRead() throws {
        let v1 = """
            {"format": "countdown-bench.run", "version": 1, "date": "2026-11-20T00:00:00Z", "arguments": ["run"],
             "machine": {"cpuModel": "AMD EPYC", "cores": 2, "kernel": "6", "swiftVersion": "6.3", "buildConfiguration": "release"},
             "options": {"backends": ["timestamp(wall)"], "counts": [10], "starts": ["spread"], "tickMs": 200, "durationMs": 1000,
                         "repeats": 1, "graceMs": 1000, "floorPeriodUs": 1000, "floorWakeUps": 10, "churnSamples": 10},
             "floor": {"repeats": [{"p99.ms": 0.07}], "summary": {}, "histogram": {"count": 2, "censoredCount": 0, "minimum": 70000, "maximum": 70000, "buckets": [[69632, 2]]}},
             "configurations": [{"backend": "timestamp(wall)", "starts": "spread", "count": 10, "atLeast": [], "outcome": "complete",
               "summary": {"tick.p99.ms": {"median": 0.2, "min": 0.2, "max": 0.2}, "cpu.percent": {"median": 3, "min": 3, "max": 3}},
               "repeats": [{"figures": {"tick.p99.ms": 0.2, "cpu.percent": 3}, "atLeast": [], "outcome": "complete",
                 "counts": {"countdowns": 10, "started": 10, "finished": 10, "notStarted": 0, "neverTicked": 0, "ticks": 40,
                   "skippedTicks": 0, "repeatedGridPoints": 0, "earlyEvents": 0, "earlyFinishes": 0, "doubledFinishes": 0,
                   "eventsAfterFinish": 0, "startErrors": {}, "startPhaseMs": 200, "windowMs": 1200, "hitTimeLimit": false,
                   "baselineThreads": 4, "peakThreads": 6, "earliestMs": 0, "churnFilled": 10, "churnFillMs": 1},
                 "histograms": {"tickLateness": {"count": 40, "censoredCount": 0, "minimum": 100000, "maximum": 200000, "buckets": [[99328, 39], [198656, 1]]},
                   "finishError": {"count": 10, "censoredCount": 0, "buckets": [[99328, 10]]},
                   "startDelay": {"count": 10, "censoredCount": 0, "buckets": [[99328, 10]]}}}]}]}
            """
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("compare-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("v1.json")
        try v1.write(to: path, atomically: true, encoding: .utf8)
        let document = try CompareCommand.load(path.path)
        let c = try #require(document.configurations.first)
        #expect(c[.tickP50]?.samples == 40 && c[.tickP99]?.isResolved == false, "40 ticks: a p50, not a p99")
        #expect(c[.cpu]?.value == 3 && c.outcome.isComplete)
        var output = StandardStreams(capturing: true)
        #expect(try CompareCommand(arguments: [path.path, path.path]).run(&output) == 0)
        #expect(try ReportCommand(arguments: [path.path, "--output", folder.appendingPathComponent("again").path]).run(&output) == 0)
        #expect(try CompareCommand.load(folder.appendingPathComponent("again/run.json").path).version == RunDocument.currentVersion)
        #expect(try CompareCommand.load(folder.appendingPathComponent("again").path).version == RunDocument.currentVersion,
                "the folder run --output wrote stands for its run.json")
    }

    @Test func unreadableFilesAndBadArgumentsAreRefused() throws {
        #expect(throws: UsageError.self) { try CompareCommand(arguments: ["only-one.json"]) }
        #expect(throws: UsageError.self) { try CompareCommand(arguments: ["a.json", "b.json", "--threshold", "-3"]) }
        var output = StandardStreams(capturing: true)
        #expect(throws: RunFileError.self) {
            try CompareCommand(arguments: ["/nonexistent/a.json", "/nonexistent/b.json"]).run(&output)
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("compare-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let other = folder.appendingPathComponent("other.json")
        try #"{"format": "something-else", "version": 1}"#.write(to: other, atomically: true, encoding: .utf8)
        #expect(throws: RunFileError.self) { try CompareCommand(arguments: [other.path, other.path]).run(&output) }
        let error = #expect(throws: RunFileError.self) { try CompareCommand(arguments: [folder.path, folder.path]).run(&output) }
        #expect(error?.description.hasSuffix("the folder holds no run.json") == true, "\(String(describing: error))")
    }
}
