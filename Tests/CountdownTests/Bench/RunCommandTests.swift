import Foundation
import Testing

import Countdown
@testable import CountdownBench

#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite(.dedicatedThread) struct RunCommandTests {
    @Test(arguments: [
        ["run", "--tick", "0ms"], ["run", "--tick", "soon"], ["run", "--tick", "500us"], ["run", "--counts", "0"],
        ["run", "--counts", "10,x"], ["run", "--repeat", "0"], ["run", "--starts", "sometimes"],
        ["run", "--duration", "200s"], ["run", "--backend", "cron"], ["run", "--format", "xml"], ["run", "--bogus"],
        ["run", "--output"], ["compare", "one.json"], ["compare", "a.json", "b.json", "--threshold", "lots"],
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
            "--backend", "timestamp", "--grace", "750ms",
        ])
        #expect(command.settings.counts == [1, 1000, 10_000])
        #expect(command.settings.tick == .seconds(1) && command.settings.duration == .milliseconds(2500))
        #expect(command.settings.repeats == 2 && command.settings.patterns == [.burst])
        #expect(command.settings.backends.map(\.description) == ["timestamp(wall)", "timestamp(continuous)", "timestamp(continuous~10ms)"])
        #expect(command.settings.grace == .milliseconds(750))
        #expect(try RunCommand(arguments: ["--quick"]).settings.counts == RunSettings.quick.counts)
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
    /// backends' base, Tests/CountdownTests/BrokenBackends.swift).
    final class Stretched: Forwarding, @unchecked Sendable {
        override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
            throws(CountdownError) -> CountdownStart
        {
            try inner.start(key: key, duration: duration * 100, observer: observer)
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func aSmallRunWritesEveryFileAndRecordsEveryCountdown() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var settings = RunSettings()
        settings.backends = [.dispatchSource, .runLoop, .timestamp(.wall), .timestamp(.continuous), Self.tooSlow]
        settings.counts = [1, 20]
        settings.tick = .milliseconds(20)
        settings.duration = .milliseconds(60)
        settings.repeats = 2
        settings.grace = .seconds(1)
        settings.floorWakeUps = 20
        settings.churnSamples = 10
        var command = try RunCommand(arguments: ["--allow-debug", "--no-progress", "--format", "csv", "--output", folder.path])
        command.settings = settings
        var output = StandardStreams(capturing: true)
        #expect(try command.run(&output) == 0)
        #expect(output.captured?.hasPrefix("backend,starts,n,repeat,") == true, "CSV on stdout")

        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(files == ["README.md", "cpu-per-event.svg", "cpu.svg", "lateness-burst.svg", "lateness-spread.svg", "run.csv", "run.json"])
        let document = try CompareCommand.load(folder.appendingPathComponent("run.json").path)
        // N = 1 runs spread only: 5 backends × (1 + 2) configurations.
        #expect(document.configurations.count == 15)
        #expect(document.floor.histogram.count == 40)
        for c in document.configurations {
            #expect(c.repeats.count == 2, "\(c.id)")
            for r in c.repeats {
                let k = r.counts
                #expect(k.started == c.count && k.notStarted == 0 && k.startErrors.isEmpty, "\(c.id): \(k)")
                #expect(k.earlyEvents == 0 && k.doubledFinishes == 0 && k.eventsAfterFinish == 0, "\(c.id): \(k)")
                if c.backend == "too-slow" {
                    #expect(k.hitTimeLimit && k.finished == 0, "\(c.id): \(k)")
                    #expect(r.outcome.hasPrefix("time limit"), "\(c.id): \(r.outcome)")
                    #expect(r.atLeast.contains(Figure.finishP99.name), "\(c.id): \(r.atLeast)")
                } else {
                    #expect(k.finished == c.count && !k.hitTimeLimit && r.outcome == "complete", "\(c.id): \(r.outcome)")
                    // Two ticks per countdown (at 20 and 40 ms); the timestamp backend may skip one after a stall.
                    #expect(k.ticks + k.skippedTicks == 2 * c.count, "\(c.id): \(k)")
                    #expect(r.figures[Figure.tickP99.name] != nil && r.figures[Figure.cpu.name] != nil, "\(c.id)")
                }
                if c.starts == .spread {
                    #expect(r.figures[Figure.startCall.name] != nil && r.figures[Figure.cancelCall.name] != nil, "\(c.id)")
                }
            }
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
