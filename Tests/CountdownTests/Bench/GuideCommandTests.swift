import Foundation
import Testing

@testable import CountdownBenchKit

/// `countdown-bench guide`: the README's decision table is what the committed results say, a
/// changed figure is caught and its cell named, and nothing is filled in by hand.
@Suite(.dedicatedThread) struct GuideCommandTests {
    static let root = Repository.root
    static let machine = "amd-epyc-2-cores"

    /// A folder of its own with a copy of the README and of the committed machine folders
    /// (every one, as the README's guide was written from them), or of ``machine``'s under each
    /// of `machines`' names.
    struct Copy {
        let folder: URL
        var results: URL { folder.appendingPathComponent("results") }
        var readme: URL { folder.appendingPathComponent("README.md") }

        init(machines: [String]? = nil) throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("guide-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder.appendingPathComponent("results"), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: GuideCommandTests.root.appendingPathComponent("README.md"), to: readme)
            let committed = GuideCommandTests.root.appendingPathComponent("results")
            let copies = try machines.map { $0.map { (GuideCommandTests.machine, $0) } }
                ?? FileManager.default.contentsOfDirectory(atPath: committed.path).filter { ResultsLibrary.isDirectory(committed.appendingPathComponent($0).path) }
                .map { ($0, $0) }
            for (source, name) in copies {
                try FileManager.default.copyItem(at: committed.appendingPathComponent(source), to: results.appendingPathComponent(name))
            }
        }

        func remove() { try? FileManager.default.removeItem(at: folder) }

        /// Sets one figure's headline value of one configuration in a run.json of the copy.
        func setFigure(_ figure: Figure, of backend: String, count: Int, in machine: String, file: String = "run.json", to value: Double) throws {
            let url = results.appendingPathComponent("\(machine)/\(file)")
            var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
            var configurations = try #require(json["configurations"] as? [[String: Any]])
            let index = try #require(configurations.firstIndex {
                $0["backend"] as? String == backend && $0["count"] as? Int == count && $0["starts"] as? String == "spread"
            })
            var figures = try #require(configurations[index]["figures"] as? [String: Any])
            var entry = try #require(figures[figure.rawValue] as? [String: Any])
            entry["value"] = value
            figures[figure.rawValue] = entry
            configurations[index]["figures"] = figures
            json["configurations"] = configurations
            try JSONSerialization.data(withJSONObject: json, options: [.sortedKeys]).write(to: url)
        }

        func guide(_ arguments: [String]) -> (status: Int32, output: String) {
            var output = StandardStreams(capturing: true)
            let status = BenchCommand.run(arguments: ["guide", "--results", results.path] + arguments, output: &output)
            return (status, output.captured ?? "")
        }
    }

    @Test func theCommittedReadmeHoldsTheGuideOfTheCommittedResults() {
        var output = StandardStreams(capturing: true)
        let status = BenchCommand.run(
            arguments: ["guide", "--results", Self.root.appendingPathComponent("results").path,
                        "--check", Self.root.appendingPathComponent("README.md").path],
            output: &output)
        #expect(status == 0, "\(output.captured ?? "")")
    }

    @Test func aChangedFigureFailsTheCheckAndNamesItsCell() throws {
        let copy = try Copy()
        defer { copy.remove() }
        #expect(copy.guide(["--check", copy.readme.path]).status == 0, "the copy, unchanged, holds its guide")

        try copy.setFigure(.tickP99, of: "timestamp(continuous)", count: 1000, in: Self.machine, to: 0.0535)
        let (status, output) = copy.guide(["--check", copy.readme.path])
        #expect(status == 1)
        #expect(output.contains("row \"p99 tick lateness, N = 1 000, 10 ms ticks (100 000 events/s)\""), "\(output)")
        #expect(output.contains("column `timestamp(continuous)`"), "\(output)")
        #expect(output.contains("results: 53.5 µs"), "the figure the results now say: \(output)")
        #expect(output.contains("\(Self.machine)/README.md:"), "the machine README's line, where the full cells are: \(output)")
    }

    /// The README's guide at a glance: a mark and one figure a cell, at most 80 characters of
    /// text besides its link, no line longer than 1 200 characters, and two charts.
    @Test func theGlanceIsShortAndEmbedsTheCharts() throws {
        let library = try ResultsLibrary.load(Self.root.appendingPathComponent("results").path)
        let glance = GlanceBuilder(library: library).build()
        let charts = GuideCharts(library: library).charts
        let markdown = GlanceMarkdown(guide: glance, linkBase: "results", charts: charts)
        #expect(glance.rows.count == GlanceBuilder.questions.count)
        for row in glance.rows {
            for cell in row.cells {
                for reading in cell.readings {
                    #expect(reading.text.count <= 80, "\(row.title): \(reading.text)")
                    #expect(["✅", "⚠️", "❌"].contains { reading.text.hasPrefix($0) }, "a mark first: \(reading.text)")
                }
            }
        }
        #expect(markdown.lines.map(\.text.count).max() ?? 0 <= 1200)
        #expect(charts.count >= 2)
        #expect(markdown.text.contains("](results/\(Self.machine)/guide-lateness.svg)"), "\(markdown.text.suffix(400))")
        #expect(charts.allSatisfy { $0.svg.hasPrefix("<svg") && $0.svg.contains("<polyline") })
    }

    @Test func aChangedChartFailsTheCheckAndWriteDrawsItAgain() throws {
        let copy = try Copy()
        defer { copy.remove() }
        let chart = copy.results.appendingPathComponent("\(Self.machine)/guide-lateness.svg")
        try "<svg/>".write(to: chart, atomically: true, encoding: .utf8)
        let (status, output) = copy.guide(["--check", copy.readme.path])
        #expect(status == 1)
        #expect(output.contains("guide-lateness.svg: not the chart the results draw"), "\(output)")
        #expect(copy.guide(["--write", copy.readme.path]).status == 0)
        #expect(try String(contentsOf: chart, encoding: .utf8).contains("<polyline"))
        #expect(copy.guide(["--check", copy.readme.path]).status == 0)
    }

    /// A machine README written again by `run` keeps its full cells; one that lost them gets
    /// them back, appended, from `guide --write`.
    @Test func aMachineReadmeGetsItsFullCellsBack() throws {
        let copy = try Copy()
        defer { copy.remove() }
        let readme = copy.results.appendingPathComponent("\(Self.machine)/README.md")
        let full = try String(contentsOf: readme, encoding: .utf8)
        let section = try #require(full.range(of: "\n## The guide's full cells"))
        try String(full[..<section.lowerBound]).write(to: readme, atomically: true, encoding: .utf8)
        #expect(copy.guide(["--check", copy.readme.path]).status == 1, "no markers: the check fails")
        #expect(copy.guide(["--write", copy.readme.path]).status == 0)
        #expect(try String(contentsOf: readme, encoding: .utf8) == full)
        // `report` writes the README again from run.json: the full cells stay.
        var output = StandardStreams(capturing: true)
        let folder = copy.results.appendingPathComponent(Self.machine).path
        #expect(BenchCommand.run(arguments: ["report", "\(folder)/run.json", "--output", folder], output: &output) == 0, "\(output.captured ?? "")")
        #expect(try String(contentsOf: readme, encoding: .utf8).contains(GuideSection.begin))
        #expect(copy.guide(["--check", copy.readme.path]).status == 0, "the report wrote the same README, full cells kept")
    }

    @Test func writeMakesTheCheckPassAndChangesNothingOutsideTheMarkers() throws {
        let copy = try Copy()
        defer { copy.remove() }
        try copy.setFigure(.cpuPerEvent, of: "dispatch-source", count: 100_000, in: Self.machine, file: "tick-1s/run.json", to: 99.5)
        let before = try String(contentsOf: copy.readme, encoding: .utf8)
        #expect(copy.guide(["--write", copy.readme.path]).status == 0)
        let after = try String(contentsOf: copy.readme, encoding: .utf8)
        #expect(after != before)
        #expect(after.contains("99.5 µs ["), "the new figure is in the glance")
        let outside = { (text: String) -> [Substring] in
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let begin = lines.firstIndex { $0 == GuideSection.begin }!, end = lines.firstIndex { $0 == GuideSection.end }!
            return Array(lines[...begin] + lines[end...])
        }
        #expect(outside(after) == outside(before), "only the text between the markers changed")
        #expect(copy.guide(["--check", copy.readme.path]).status == 0)
    }

    @Test func aReadmeWithoutMarkersIsAnErrorAndLeftAsItIs() throws {
        let copy = try Copy()
        defer { copy.remove() }
        let text = "# A README\n\nNo markers here.\n"
        try text.write(to: copy.readme, atomically: true, encoding: .utf8)
        for mode in ["--write", "--check"] {
            let (status, output) = copy.guide([mode, copy.readme.path])
            #expect(status == 1, "\(mode)")
            #expect(output.contains("needs the guide's markers"), "\(output)")
            #expect(try String(contentsOf: copy.readme, encoding: .utf8) == text, "\(mode) left the file as it was")
        }
    }

    @Test func aDamagedResultFileIsAnErrorNamingItAndTheReadmeIsLeftAsItIs() throws {
        let copy = try Copy()
        defer { copy.remove() }
        let suspend = copy.results.appendingPathComponent("\(Self.machine)/suspend.json")
        try Data("{\"format\": \"countdown-bench.suspend\", \"truncated".utf8).write(to: suspend)
        let before = try Data(contentsOf: copy.readme)
        let (status, output) = copy.guide(["--write", copy.readme.path])
        #expect(status == 1)
        #expect(output.contains("suspend.json"), "\(output)")
        #expect(try Data(contentsOf: copy.readme) == before)
        var missing = StandardStreams(capturing: true)
        #expect(BenchCommand.run(arguments: ["guide", "--results", "/nonexistent/results"], output: &missing) == 1)
    }

    @Test func severalMachinesGiveTheRangeAndNameEachMachine() throws {
        let copy = try Copy(machines: [Self.machine, "intel-xeon-2-cores"])
        defer { copy.remove() }
        let committed = GuideBuilder(library: try ResultsLibrary.load(Self.root.appendingPathComponent("results").path)).build()
        let title = "p99 tick lateness, N = 1 000,"
        let committedColumn = try #require(committed.columns.firstIndex(of: "timestamp(continuous)"))
        // The committed figure, whatever the last regeneration measured; the copy's other
        // machine measured twice as much, so that the range is the committed figure first.
        let reading = try #require(committed.rows.first { $0.title.hasPrefix(title) }?.cells[committedColumn].readings.first)
        let measured = try #require(reading.magnitude).value
        try copy.setFigure(.tickP99, of: "timestamp(continuous)", count: 1000, in: "intel-xeon-2-cores", to: 2 * measured)
        let figure = ReportFormat.milliseconds(measured), other = ReportFormat.milliseconds(2 * measured)
        let library = try ResultsLibrary.load(copy.results.path)
        let guide = GuideBuilder(library: library).build()
        #expect(guide.machines.map(\.folder) == [Self.machine, "intel-xeon-2-cores"])
        #expect(committed.machines.first?.summary.contains("a dependent memory load took ") == true,
                "the machine's memory, from its runs: \(committed.machines.first?.summary ?? "no machine")")
        #expect(GuideBuilder.memory([
            MemoryLatency(smallSetBytes: 4 << 20, largeSetBytes: 64 << 20, smallSetNs: [12, 13], largeSetNs: [150]),
            MemoryLatency(smallSetBytes: 4 << 20, largeSetBytes: 64 << 20, smallSetNs: [90], largeSetNs: [150]),
        ]) == "; a dependent memory load took 12–90 ns in 4 MiB, 150 ns in 64 MiB while its runs were measured")
        #expect(GuideBuilder.memory([]) == "", "runs from before it was measured say nothing of it")
        let markdown = GuideMarkdown(guide: guide, linkBase: "results")
        let row = try #require(guide.rows.first { $0.title.hasPrefix(title) })
        let column = try #require(guide.columns.firstIndex(of: "timestamp(continuous)"))
        let cell = markdown.cell(row.cells[column])
        #expect(cell.hasPrefix("\(figure)–\(other) over 2 machines: "), "the range first: \(cell)")
        #expect(cell.contains("amd-epyc-2-cores: \(figure)"), "\(cell)")
        #expect(cell.contains("intel-xeon-2-cores: \(other)"), "\(cell)")
        #expect(cell.contains("(results/intel-xeon-2-cores/run.json)"), "each machine's own file: \(cell)")
        // A cell both measured alike: said once, with both machines named.
        let drift = try #require(guide.rows.first { $0.title.hasPrefix("drift") })
        let driftCell = markdown.cell(drift.cells[column])
        #expect(driftCell.contains("on 2 machines") || driftCell.contains("over 2 machines"), "\(driftCell)")
        #expect(driftCell.contains("amd-epyc-2-cores") && driftCell.contains("intel-xeon-2-cores"), "\(driftCell)")
    }

    @Test func aCellWithNothingMeasuredSaysSo() throws {
        let copy = try Copy(machines: [])
        defer { copy.remove() }
        let only = copy.results.appendingPathComponent("one-check-only")
        try FileManager.default.createDirectory(at: only, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: Self.root.appendingPathComponent("results/\(Self.machine)/conformance.json"),
            to: only.appendingPathComponent("conformance.json"))
        let guide = GuideBuilder(library: try ResultsLibrary.load(copy.results.path)).build()
        let markdown = GuideMarkdown(guide: guide, linkBase: "results")
        for row in guide.rows where !row.title.contains("conformance") {
            #expect(row.cells.allSatisfy { markdown.cell($0) == "not measured" }, "\(row.title)")
        }
        let drift = try #require(guide.rows.first { $0.title.hasPrefix("drift") })
        #expect(drift.cells.allSatisfy { !$0.readings.isEmpty }, "every backend's drift is in conformance.json")
        #expect(guide.statements.allSatisfy { markdown.cell($0.cell) == "not measured" })
    }

    @Test func anOutcomeThatIsNotCompleteIsSaidInWords() throws {
        let run = try RunDocumentFile.load(Self.root.appendingPathComponent("results/\(Self.machine)/tick-1s/run.json").path)
        let c = try #require(run.configurations.first)
        let cutOff = RunDocument.Configuration(
            backend: c.backend, starts: c.starts, count: 1_000_000, rounds: c.rounds, figures: c.figures,
            outcome: Outcome(cutOff: .init(
                limitMs: 5000, finished: 786_541, countdowns: 1_000_000, notStarted: 213_459, startPhaseMs: 2002,
                lateStartsPercent: 0, startDelayP50Ms: 0.03, startDelayIsLowerBound: false)),
            isNoisy: false, isDisturbed: false, windowFloor: nil, load: nil, repeats: c.repeats, histograms: nil)
        let words = GuideBuilder.outcome(cutOff)
        #expect(words.contains("cut off at its 5 s limit"), "\(words)")
        #expect(words.contains("786\u{2009}541 of 1\u{2009}000\u{2009}000 finished"), "\(words)")
        #expect(words.contains("213\u{2009}459 never started"), "\(words)")
        #expect(GuideBuilder.outcome(c).hasPrefix("all "), "a complete one: \(GuideBuilder.outcome(c))")
    }

    /// What `guide` reads is what `conformance` and `suspend` wrote: read and written again, the
    /// committed files come out byte for byte.
    @Test func theCommittedConformanceAndSuspendFilesRoundTrip() throws {
        let folder = Self.root.appendingPathComponent("results/\(Self.machine)")
        let conformance = try String(contentsOf: folder.appendingPathComponent("conformance.json"), encoding: .utf8)
        let suspend = try String(contentsOf: folder.appendingPathComponent("suspend.json"), encoding: .utf8)
        #expect(try JSONDecoder().decode(ConformanceDocument.self, from: Data(conformance.utf8)).encoded() == conformance)
        #expect(try JSONDecoder().decode(SuspendDocument.self, from: Data(suspend.utf8)).encoded() == suspend)
    }

    /// Each case of "what a fleet keeps" is told by its own row: the keyspace strategy's cases
    /// once read the expiry row, whose title begins with the same strategy name.
    @Test func eachFleetCaseIsToldByItsOwnRow() throws {
        let library = try ResultsLibrary.load(Self.root.appendingPathComponent("results").path)
        let statements = FleetGuide(library: library).statements
        let cases = statements.filter { $0.title.contains("`: ") }
        #expect(cases.contains { $0.title.hasPrefix("`redis(keyspace)`: ") }, "the committed results have the keyspace strategy's cases")
        for statement in cases {
            for reading in statement.cell.readings {
                #expect(reading.text.contains("owed finishes heard") && !reading.text.contains("beside "), "\(statement.title): \(reading.text)")
            }
        }
    }

    @Test func badArgumentsExitTwo() {
        for arguments in [["guide", "--check"], ["guide", "--check", "a.md", "--write", "b.md"], ["guide", "--frobnicate"]] {
            var output = StandardStreams(capturing: true)
            #expect(BenchCommand.run(arguments: arguments, output: &output) == 2, "\(arguments)")
            #expect((output.captured ?? "").split(separator: "\n").count == 1, "one line: \(output.captured ?? "")")
        }
    }

    @Test func driftAndLinksAreReadFromTheirFiles() {
        #expect(GuideBuilder.driftPerTick("the ticks drift -0.2 µs per tick from start + k·T (median of 5 rounds)") == "−0.2 µs a tick")
        #expect(GuideBuilder.driftPerTick("the ticks drift -0.0 µs per tick from the first fire + k·T, floor to floor") == "0.0 µs a tick",
                "a drift that rounds to zero has no sign")
        #expect(GuideBuilder.driftPerTick("something else") == "something else", "an unknown figure is shown as written")
        #expect(GuideMarkdown.label("amd-epyc-2-cores/tick-1s/run.json") == "tick-1s")
        #expect(GuideMarkdown.label("amd-epyc-2-cores/run.json") == "run")
        #expect(GuideMarkdown.label("amd-epyc-2-cores/suspend.json") == "suspend")
        #expect(GuideCommand.relativePath(to: "/a/b/results", from: "/a/b") == "results")
        #expect(GuideCommand.relativePath(to: "/a/results", from: "/a/b") == "../results")
        #expect(GuideMarkdown.cells(of: "| t | x \\| y | z |") == ["t", "x | y", "z"])
        #expect(GuideBuilder.ratio(185, 185.4) == "the same")
        #expect(GuideBuilder.ratio(14.3, 3.92) == "3.65×")
        #expect(GuideBuilder.ratio(3.92, 10.4) == "2.65× less")
    }
}
