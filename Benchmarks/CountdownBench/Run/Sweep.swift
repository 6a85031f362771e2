import CountdownSupport
import Countdown
import Foundation

/// The whole sweep: per repeat, the floor, then every backend × N × start pattern. Repeats are
/// the outer loop, so that a slow minute on this shared machine lands on one repeat of every
/// configuration rather than on every repeat of one.
struct Sweep {
    let settings: RunSettings
    let arguments: [String]
    let progress: Progress

    struct Step {
        let backend: CountdownBackend
        let count: Int
        let pattern: StartPattern
        var id: String { "\(backend) \(pattern.rawValue) N=\(count)" }
    }

    /// Every configuration in the order it is run. A burst of one countdown is not a herd, so
    /// N = 1 runs spread only.
    var steps: [Step] {
        settings.counts.flatMap { count in
            settings.backends.flatMap { backend in
                settings.patterns.filter { !($0 == .burst && count == 1 && settings.patterns.count > 1) }
                    .map { Step(backend: backend, count: count, pattern: $0) }
            }
        }
    }

    /// Roughly how long the sweep takes when every backend keeps up.
    var estimatedSeconds: Double {
        let perRepeat = steps.reduce(0.0) { total, step in
            let run = (step.pattern == .spread ? settings.tick : .zero) + settings.duration
            return total + run.seconds + 0.15 + (step.count >= 10_000 ? 0.5 : 0)
        }
        return Double(settings.repeats) * (perRepeat + settings.floorPeriod.seconds * Double(settings.floorWakeUps))
    }

    func run() throws -> RunDocument {
        let keys = (0..<(settings.counts.max() ?? 0)).map { "countdown-\($0)" }
        let steps = steps
        var floorRepeats: [LatencyHistogram] = []
        var repeats: [String: [RunDocument.Repeat]] = [:]
        let total = steps.count * settings.repeats
        var done = 0
        for repeatIndex in 0..<settings.repeats {
            progress.note("repeat \(repeatIndex + 1) of \(settings.repeats): the floor (\(settings.floorWakeUps) wake-ups)")
            let floor = FloorProbe.measure(
                period: UInt64(settings.floorPeriod.nanoseconds), wakeUps: settings.floorWakeUps)
            floorRepeats.append(floor)
            let floorP99 = floor.percentile(99)?.milliseconds
            for step in steps {
                Self.waitUntilQuiet()
                done += 1
                progress.begin("[\(done)/\(total)] \(step.id), repeat \(repeatIndex + 1)")
                let stepStarted = SystemClocks.monotonic()
                let result = try RepeatMeasurement(
                    backend: step.backend, count: step.count, pattern: step.pattern, settings: settings,
                    keys: keys[0..<step.count], floorP99: floorP99
                ).measure()
                repeats[step.id, default: []].append(result)
                let p99 = ReportFormat.figure(.tickP99, result.figures[Figure.tickP99.name], atLeast: result.atLeast.contains(Figure.tickP99.name))
                let took = ReportFormat.milliseconds(Double(SystemClocks.monotonic() - stepStarted) / 1e6)
                progress.end("p99 \(p99); \(result.outcome) [\(took)]")
            }
        }
        let configurations = steps.map { step in
            Self.configuration(step, repeats: repeats[step.id] ?? [])
        }
        return RunDocument(
            machine: .current, date: ISO8601DateFormatter().string(from: Date()), arguments: arguments,
            options: .init(
                backends: settings.backends.map(\.description), counts: settings.counts, starts: settings.patterns,
                tickMs: settings.tick.seconds * 1000, durationMs: settings.duration.seconds * 1000,
                repeats: settings.repeats, graceMs: settings.grace.seconds * 1000,
                floorPeriodUs: settings.floorPeriod.seconds * 1e6, floorWakeUps: settings.floorWakeUps,
                churnSamples: settings.churnSamples),
            floor: Self.floor(floorRepeats), configurations: configurations)
    }

    /// Waits (at most 15 s) until the process uses less than 5 % of a core over 100 ms, so that
    /// what a configuration leaves behind (a run loop's thread freeing a million timers, pool
    /// threads winding down) is not charged to the next one.
    static func waitUntilQuiet() {
        let limit = SystemClocks.monotonic() + 15_000_000_000
        while SystemClocks.monotonic() < limit {
            let before = ProcessUsage.now().cpuNanoseconds
            SystemClocks.sleep(untilMonotonic: SystemClocks.monotonic() + 100_000_000)
            if ProcessUsage.now().cpuNanoseconds - before < 5_000_000 { return }
        }
    }

    static func configuration(_ step: Step, repeats: [RunDocument.Repeat]) -> RunDocument.Configuration {
        var summary: [String: Spread] = [:]
        for figure in Figure.all {
            if let spread = Spread(repeats.compactMap { $0.figures[figure.name] }) { summary[figure.name] = spread }
        }
        let atLeast = Set(repeats.flatMap(\.atLeast)).sorted()
        let worst = repeats.max { $0.counts.countdowns - $0.counts.finished < $1.counts.countdowns - $1.counts.finished }
        let outcome = repeats.allSatisfy { $0.outcome == "complete" } ? "complete" : (worst?.outcome ?? "not run")
        return .init(
            backend: step.backend.description, starts: step.pattern, count: step.count, summary: summary,
            atLeast: atLeast, outcome: outcome, repeats: repeats)
    }

    static func floor(_ repeats: [LatencyHistogram]) -> RunDocument.Floor {
        let percentiles: [(String, Double)] = [("p50", 50), ("p90", 90), ("p99", 99), ("p99.9", 99.9), ("max", 100)]
        let perRepeat = repeats.map { histogram in
            Dictionary(uniqueKeysWithValues: percentiles.compactMap { name, p in
                histogram.percentile(p).map { ("\(name).ms", $0.milliseconds) }
            })
        }
        var summary: [String: Spread] = [:]
        for (name, _) in percentiles {
            if let spread = Spread(perRepeat.compactMap { $0["\(name).ms"] }) { summary["\(name).ms"] = spread }
        }
        var merged = LatencyHistogram()
        for histogram in repeats { merged.merge(histogram) }
        return .init(repeats: perRepeat, summary: summary, histogram: merged)
    }
}

/// Progress on stderr: one line rewritten in place on a terminal, a line per step otherwise,
/// nothing with `--no-progress`.
struct Progress: Sendable {
    let enabled: Bool
    let isTerminal: Bool

    init(enabled: Bool) {
        self.enabled = enabled
        isTerminal = isatty(STDERR_FILENO) == 1
    }

    func note(_ text: String) {
        guard enabled else { return }
        write((isTerminal ? "\r\u{1B}[K" : "") + "run: \(text)\n")
    }

    func begin(_ text: String) {
        guard enabled else { return }
        write(isTerminal ? "\r\u{1B}[Krun: \(text)…" : "run: \(text): ")
    }

    func end(_ text: String) {
        guard enabled else { return }
        write(isTerminal ? " \(text)" : "\(text)\n")
    }

    func finish() {
        guard enabled, isTerminal else { return }
        write("\r\u{1B}[K")
    }

    private func write(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
