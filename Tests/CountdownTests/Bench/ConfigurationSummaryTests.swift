import Foundation
import Testing

import Countdown
@testable import CountdownBenchKit

@Suite(.dedicatedThread) struct ConfigurationSummaryTests {
    /// A repeat whose ticks were `ticks` late by `lateness` ns each, and whose floor woke 1 000
    /// times `floor` ns late.
    func repeatSamples(ticks: Int, lateness: UInt64, floor: UInt64 = 50_000) -> RepeatSamples {
        var tally = ConfigurationRunner.Tally()
        for _ in 0..<ticks { tally.tickLateness.record(lateness) }
        for _ in 0..<1000 { tally.windowFloor.record(floor) }
        tally.window = 1_000_000_000
        tally.cpu = 10_000_000
        tally.rounds = 1
        return RepeatSamples(run: tally, churn: nil, tick: 10_000_000)
    }

    let step = Sweep.Step(backend: .timestamp(.continuous), count: 10, pattern: .spread)

    @Test func percentilesPoolEveryRepeatAndCarryTheirSamples() throws {
        let c = ConfigurationSummary.configuration(step, rounds: 1, baselineFloorP99: 0.05, repeats: [
            repeatSamples(ticks: 990, lateness: 100_000), repeatSamples(ticks: 990, lateness: 100_000),
            repeatSamples(ticks: 20, lateness: 5_000_000),
        ])
        let p99 = try #require(c[.tickP99])
        #expect(p99.samples == 2000 && p99.isResolved)
        // 20 of 2 000 pooled ticks were 5 ms late: the pooled p99 is at 100 µs, the p99.9 at 5 ms.
        #expect(abs(p99.value - 0.1) < 0.002, "\(p99)")
        #expect(abs((c[.tickP999]?.value ?? 0) - 5) < 0.1, "\(String(describing: c[.tickP999]))")
        #expect(c[.tickP999]?.isResolved == true)
        // The third repeat alone had a p99 of 5 ms: the repeats disagree 50×.
        #expect(c.isNoisy)
        #expect(p99.repeats.map { $0.max / $0.min > 40 } == true)
        #expect(c[.cpu]?.samples == 3 && c[.cpu]?.value == 1, "CPU: the median of three repeats, 1 % each")
        #expect(abs((c[.floorRatio]?.value ?? 0) - 2) < 0.1, "100 µs over a 50 µs floor in the same windows")
    }

    @Test func tooFewSamplesAreMarkedAndAgreeingRepeatsAreNotNoisy() throws {
        let c = ConfigurationSummary.configuration(step, rounds: 1, baselineFloorP99: 0.05, repeats: [
            repeatSamples(ticks: 40, lateness: 100_000), repeatSamples(ticks: 40, lateness: 150_000),
        ])
        #expect(c[.tickP99]?.isResolved == false && c[.tickP99]?.samples == 80)
        #expect(c[.tickP50]?.isResolved == true)
        #expect(!c.isNoisy, "1.5× apart is not noise")
        #expect(!c.isDisturbed, "each window's floor p99 (50 µs) is the floor alone's")
        let disturbed = ConfigurationSummary.configuration(step, rounds: 1, baselineFloorP99: 0.05, repeats: [
            repeatSamples(ticks: 200, lateness: 100_000), repeatSamples(ticks: 200, lateness: 100_000, floor: 1_000_000),
        ])
        #expect(disturbed.isDisturbed, "a window whose floor p99 was 1 ms against 50 µs alone")
        #expect(OutcomeText.describe(disturbed).contains("window floor p99"), "\(OutcomeText.describe(disturbed))")
        #expect(ReportFormat.figure(.tickP99, c[.tickP99]) == "n=80")
    }

    @Test func theCompactDocumentRoundTrips() throws {
        let c = ConfigurationSummary.configuration(step, rounds: 2, baselineFloorP99: 0.05, repeats: [repeatSamples(ticks: 1000, lateness: 80_000)])
        let document = RunDocument(
            machine: Machine(cpuModel: "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz", cores: 2, kernel: "6", swiftVersion: "6.3", buildConfiguration: "release"),
            date: "2026-11-23T00:00:00Z", arguments: ["run"],
            options: .init(
                backends: ["timestamp(continuous)"], counts: [10], starts: [.spread], tickMs: 10, durationMs: 1000, repeats: 1,
                graceMs: 1000, floorPeriodUs: 1000, floorWakeUps: 10, churnSamples: 10, minimumTickSamples: 2000),
            floor: .init(summary: LatencySummary(LatencyHistogram()), repeatP99s: [], histogram: .init()),
            load: MachineLoad(stealPercent: 7, otherProcessesPercent: 1, windowMs: 1000), configurations: [c])
        let text = try RunDocumentFile.encode(document)
        #expect(!text.dropLast().contains("\n"), "compact: one line")
        #expect(document.machine.folderName == "intel-xeon-platinum-8375c-2-cores")
        #expect(document.load?.isBusy == true, "7 % steal is a busy machine")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("doc-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: folder) }
        try text.write(to: folder, atomically: true, encoding: .utf8)
        let back = try RunDocumentFile.load(folder.path)
        #expect(try RunDocumentFile.encode(back) == text, "written again byte for byte")
        #expect(back.configurations.first?.histograms?.tickLateness.count == 1000)
    }

    @Test func hgrmListsPercentilesUpToTheTotal() throws {
        var histogram = LatencyHistogram()
        for value in 1...1000 { histogram.record(UInt64(value) * 1000) }
        let lines = HgrmExport(histogram: histogram).render().split(separator: "\n")
        #expect(lines.first?.contains("Percentile") == true)
        let rows = lines.dropFirst().filter { !$0.hasPrefix("#") }
        let last = try #require(rows.last?.split(separator: " ", omittingEmptySubsequences: true))
        #expect(last.count == 3 && last[1] == "1.000000000000" && last[2] == "1000", "\(last)")
        let median = try #require(rows.first { $0.contains(" 0.500000000000 ") }?.split(separator: " "))
        #expect(abs((Double(median[0]) ?? 0) - 0.5) < 0.01, "p50 of 1…1 000 µs is 0.5 ms: \(median)")
        #expect(lines.contains { $0.hasPrefix("#[Max     =        1.000") })
    }
}
