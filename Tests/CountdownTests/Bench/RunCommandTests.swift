import Foundation
import Testing

import Countdown
@testable import CountdownBenchKit

#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite(.dedicatedThread) struct RunCommandTests {
    @Test(arguments: [
        ["run", "--tick", "0ms"], ["run", "--tick", "soon"], ["run", "--tick", "500us"], ["run", "--counts", "0"],
        ["run", "--counts", "10,x"], ["run", "--repeat", "0"], ["run", "--starts", "sometimes"],
        ["run", "--duration", "200s"], ["run", "--backend", "cron"], ["run", "--backend", "timestamp,cron"], ["conformance", "--backend", "all,cron"],
        ["run", "--namespace", "a{b}"], ["run", "--namespace", "two words"], ["run", "--redis-timeout", "0s"], ["run", "--format", "xml"], ["run", "--bogus"],
        ["run", "--output"], ["run", "--keys", "long"], ["run", "--floor-period", "50us"], ["run", "--floor-period", "2s"], ["run", "--backend", "virtual"], ["compare", "one.json"], ["compare", "a.json", "b.json", "--threshold", "lots"],
        ["suspend", "--jobs", "0"], ["suspend", "--jobs", "17"], ["suspend", "--jobs", "some"],
    ])
    func badArgumentsExitTwoWithOneLine(_ arguments: [String]) {
        var output = StandardStreams(capturing: true)
        #expect(BenchCommand.run(arguments: arguments, output: &output) == 2)
        let text = output.captured ?? ""
        #expect(text.hasPrefix("countdown-bench: ") && text.filter { $0 == "\n" }.count == 1, "\(text)")
    }

    @Test func argumentsAreRead() throws {
        let command = try RunCommand(arguments: [
            "--counts", "10k,1,1_000", "--tick", "1s", "--duration=2.5s", "--repeat", "2", "--starts", "burst",
            "--backend", "timestamp", "--grace", "750ms", "--floor-period", "10ms",
        ])
        #expect(command.settings.counts == [1, 1000, 10_000])
        #expect(command.settings.tick == .seconds(1) && command.settings.duration == .milliseconds(2500))
        #expect(command.settings.repeats == 2 && command.settings.patterns == [.burst])
        #expect(command.settings.backends.map(\.description) == ["timestamp(wall)", "timestamp(continuous)", "timestamp(continuous~10ms)"])
        #expect(command.settings.grace == .milliseconds(750))
        #expect(command.settings.floorPeriod == .milliseconds(10))
        #expect(try RunCommand(arguments: []).settings.floorPeriod == .milliseconds(1), "1 ms unless told otherwise")
        #expect(try RunCommand(arguments: ["--quick"]).settings.counts == RunSettings.quick.counts)
        #expect(command.settings.keys == .real, "keys like real ones unless told otherwise")
        #expect(try RunCommand(arguments: ["--keys", "short"]).settings.keys == .short)
        // "all" within a list: each backend once.
        let listed = try CountdownBackend.select("timestamp,all", includingTests: true).map(\.description)
        #expect(listed.count == Set(listed).count && listed.contains("virtual") && listed.first == "timestamp(wall)")
    }

    @Test("real keys are 23 or 26 bytes, beyond Swift's 15 inline, and distinct; short ones as before")
    func keyShapes() {
        let real = (0..<100_000).map(KeyShape.real.key)
        #expect(Set(real).count == real.count)
        #expect(real.allSatisfy { (20...32).contains($0.utf8.count) }, "\(real.first { !(20...32).contains($0.utf8.count) } ?? "")")
        #expect(KeyShape.real.key(0) == "sms-code:+8613800000000" && KeyShape.real.key(1) == "rate-limit:user:0000000000")
        #expect(KeyShape.short.key(42) == "countdown-42")
    }

    @Test func aDebugBuildRefusesToMeasureUnlessAllowed() {
        var output = StandardStreams(capturing: true)
        let status = BenchCommand.run(arguments: ["run", "--counts", "1", "--repeat", "1"], output: &output)
        if Machine.isReleaseBuild {
            #expect(status == 0)
        } else {
            #expect(status == 2)
            #expect(output.captured?.contains("refusing to measure a debug build") == true)
        }
    }

    /// A backend that makes every countdown 100 times longer than asked: it cannot finish in
    /// time, deterministically, so the time limit must cut it off and say so.
    static let tooSlow = CountdownBackend(name: "too-slow") { (o: CountdownBackend.Options) throws(CountdownError) in
        Stretched(try DispatchSourceScheduler(tickInterval: o.tickInterval, deliveryQueue: o.deliveryQueue))
    }

    /// Forwards everything, with durations 100 times longer (`Forwarding` is the broken
    /// backends' base, Tests/CountdownTests/BrokenBackends/Forwarding.swift).
    final class Stretched: Forwarding, @unchecked Sendable {
        override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
            throws(CountdownError) -> CountdownStart
        {
            try inner.start(key: key, duration: duration * 100, observer: observer)
        }
    }

    // A watchdog, not a bound: 24 s alone, 108 s and once past 120 s beside the whole suite
    // in parallel on two cores.
    @Test(.runsAlone, .timeLimit(.minutes(5)))
    func aSmallRunWritesEveryFileAndRecordsEveryCountdown() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var settings = RunSettings()
        settings.backends = [.dispatchSource, .runLoop, .timestamp(.wall), .timestamp(.continuous), Self.tooSlow]
        settings.counts = [1, 20]
        settings.tick = .milliseconds(20)
        settings.duration = .milliseconds(60)
        settings.repeats = 2
        settings.minimumTickSamples = 100
        settings.grace = .seconds(1)
        settings.floorWakeUps = 20
        settings.churnSamples = 10
        var command = try RunCommand(arguments: ["--allow-debug", "--no-progress", "--format", "csv", "--output", folder.path])
        command.settings = settings
        var output = StandardStreams(capturing: true)
        #expect(try command.run(&output) == 0)
        #expect(output.captured?.hasPrefix(CSVRunReport.header.joined(separator: ",")) == true, "CSV on stdout")

        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(files == [
            "README.md", "benchmark-action.json", "cpu-per-event.svg", "cpu.svg", "hgrm", "lateness-burst.svg",
            "lateness-spread.svg", "run.csv", "run.json",
        ])
        let document = try CompareCommand.load(folder.appendingPathComponent("run.json").path)
        #expect(document.version == RunDocument.currentVersion)
        #expect(document.options.keyShape == .real)
        // N = 1 runs spread only: 5 backends × (1 + 2) configurations.
        #expect(document.configurations.count == 15)
        #expect(document.floor.histogram.count == 40)
        let hgrm = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("hgrm").path)
        #expect(hgrm.count == 15, "a distribution per configuration: \(hgrm)")
        // Two ticks per countdown (at 20 and 40 ms): N = 1 needs 25 rounds a repeat for 100
        // samples over two repeats, N = 20 two.
        #expect(settings.rounds(for: 1) == 25 && settings.rounds(for: 20) == 2)
        for c in document.configurations {
            #expect(c.repeats.count == 2, "\(c.id)")
            #expect(c.windowFloor.map { $0.samples > 0 } == true, "\(c.id): the floor ran through its window")
            #expect(c.load != nil, "\(c.id): the machine's load was read")
            for r in c.repeats {
                let k = r.counts
                #expect(k.notStarted == 0 && r.outcome.startErrors.isEmpty, "\(c.id): \(k)")
                #expect(!r.outcome.breachesContract, "\(c.id): \(r.outcome)")
                if c.backend == "too-slow" {
                    #expect(k.hitTimeLimit && k.finished == 0 && k.rounds == 1, "\(c.id): cut off in its first round: \(k)")
                    #expect(r.outcome.cutOff != nil, "\(c.id): \(r.outcome)")
                    #expect(r.lowerBounds.contains(.finishP99), "\(c.id): \(r.lowerBounds)")
                } else {
                    #expect(k.rounds == settings.rounds(for: c.count), "\(c.id): \(k)")
                    #expect(k.started == c.count * k.rounds && k.finished == k.started, "\(c.id): \(k)")
                    #expect(!k.hitTimeLimit && r.outcome.isComplete, "\(c.id): \(r.outcome)")
                    // The timestamp backend may skip a tick after a stall.
                    #expect(k.ticks + r.outcome.skippedTicks == 2 * k.started, "\(c.id): \(k)")
                    #expect(r.figures[.tickP99] != nil && r.figures[.cpu] != nil, "\(c.id)")
                    // Wake-ups counted, beside the floor thread's cost of one in the same windows.
                    #expect(r.figures[.wakeUps].map { $0 > 0 } == true && r.figures[.floorCPUPerWakeUp].map { $0 > 0 } == true,
                            "\(c.id): \(r.figures)")
                }
                if c.starts == .spread {
                    #expect(r.figures[.startCall] != nil && r.figures[.cancelCall] != nil, "\(c.id)")
                    // Beside them, a Dictionary's insert and remove of the same keys, and the ratios.
                    for figure in [Figure.startFloor, .cancelFloor, .startFloorRatio, .cancelFloorRatio] {
                        #expect(r.figures[figure].map { $0 > 0 } == true, "\(c.id): \(figure.name)")
                    }
                }
            }
            guard c.backend != "too-slow" else { continue }
            // Pooled: the headline p99 counts every tick of both repeats, and says it.
            let p99 = try #require(c[.tickP99])
            #expect(p99.samples == c.repeats.reduce(0) { $0 + $1.counts.ticks }, "\(c.id)")
            #expect(p99.samples >= 100 && p99.isResolved, "\(c.id): \(p99)")
            #expect(c[.tickP999]?.isResolved == false, "\(c.id): a p99.9 of fewer than 1 000 ticks is not resolved")
            #expect(c[.tickP99]?.repeats != nil, "\(c.id): the spread between repeats")
        }
        var compareOutput = StandardStreams(capturing: true)
        let path = folder.appendingPathComponent("run.json").path
        #expect(try CompareCommand(arguments: [path, path]).run(&compareOutput) == 0, "a run against itself")

        // report writes the same files again from run.json alone, the JSON unchanged.
        let again = folder.appendingPathComponent("again")
        var reportOutput = StandardStreams(capturing: true)
        #expect(try ReportCommand(arguments: [path, "--output", again.path, "--format", "markdown"]).run(&reportOutput) == 0)
        #expect(try Data(contentsOf: again.appendingPathComponent("run.json")) == Data(contentsOf: folder.appendingPathComponent("run.json")))
        #expect(reportOutput.captured?.contains("## What keeps up") == true)
        #expect(try Data(contentsOf: folder.appendingPathComponent("run.json")).count < 1_000_000)

        let readme = try String(contentsOf: folder.appendingPathComponent("README.md"), encoding: .utf8)
        for backend in settings.backends { #expect(readme.contains(backend.description)) }
        for chart in ["cpu.svg", "cpu-per-event.svg", "lateness-spread.svg"] {
            let data = try Data(contentsOf: folder.appendingPathComponent(chart))
            let parser = XMLParser(data: data)
            #expect(parser.parse(), "\(chart) is well-formed XML")
            let svg = String(decoding: data, as: UTF8.self)
            #expect(svg.components(separatedBy: "<polyline").count - 1 == settings.backends.count, "\(chart): a line per backend")
        }
    }
}
