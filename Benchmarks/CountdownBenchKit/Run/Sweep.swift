import CountdownSupport
import Countdown
import Foundation

/// The whole sweep: per repeat, the floor alone, then every backend × N × start pattern.
/// Repeats are the outer loop, so that a slow minute on this shared machine lands on one repeat
/// of every configuration rather than on every repeat of one. What it is doing is told as typed
/// ``Event``s; rendering them is the caller's.
struct Sweep {
    let settings: RunSettings
    let arguments: [String]

    /// One configuration: which backend, how many countdowns, how their starts are placed.
    struct Step: Sendable {
        let backend: CountdownBackend
        let count: Int
        let pattern: StartPattern
        var id: String { "\(backend) \(pattern.rawValue) N=\(count)" }
    }

    enum Event {
        case began(configurations: Int, repeats: Int, estimatedSeconds: Double)
        case measuringMachine(repeat: Int, wakeUps: Int)
        case stepBegan(Step, number: Int, of: Int, repeat: Int, rounds: Int)
        /// A repeat of a step ended: its tick p99 (nil without ticks), outcome, and how long it took.
        case stepEnded(p99: LatencyHistogram.Percentile?, outcome: Outcome, seconds: Double)
        case ended(seconds: Double)
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
            let round = (step.pattern == .spread ? settings.tick : .zero) + settings.duration
            let overhead = 0.15 + (step.count >= 10_000 ? 0.5 : 0)
            return total + round.seconds * Double(settings.rounds(for: step.count)) + overhead
        }
        return Double(settings.repeats) * (perRepeat + settings.floorPeriod.seconds * Double(settings.floorWakeUps))
    }

    func run(onEvent: (Event) -> Void) throws -> RunDocument {
        // Made before the run, so that making them is not measured.
        let keys = (0..<(settings.counts.max() ?? 0)).map(settings.keys.key)
        let steps = steps
        let sweepStarted = SystemClocks.monotonic()
        onEvent(.began(configurations: steps.count, repeats: settings.repeats, estimatedSeconds: estimatedSeconds))
        var floorRepeats: [LatencyHistogram] = []
        var memoryRepeats: [(small: Double, large: Double)] = []
        var samples: [String: [RepeatSamples]] = [:]
        let total = steps.count * settings.repeats
        var done = 0
        for repeatIndex in 0..<settings.repeats {
            onEvent(.measuringMachine(repeat: repeatIndex + 1, wakeUps: settings.floorWakeUps))
            floorRepeats.append(FloorProbe.measure(
                period: UInt64(settings.floorPeriod.nanoseconds), wakeUps: settings.floorWakeUps))
            memoryRepeats.append(MemoryProbe.measure())
            for step in steps {
                Self.waitUntilQuiet()
                done += 1
                onEvent(.stepBegan(step, number: done, of: total, repeat: repeatIndex + 1, rounds: settings.rounds(for: step.count)))
                let stepStarted = SystemClocks.monotonic()
                let result = try RepeatMeasurement(step: step, settings: settings, keys: keys[0..<step.count]).measure()
                samples[step.id, default: []].append(result)
                onEvent(.stepEnded(
                    p99: result.run.tickLateness.percentile(99), outcome: result.run.outcome,
                    seconds: Double(SystemClocks.monotonic() - stepStarted) / 1e9))
            }
        }
        var floor = LatencyHistogram()
        for histogram in floorRepeats { floor.merge(histogram) }
        let configurations = steps.map { step in
            ConfigurationSummary.configuration(
                step, rounds: settings.rounds(for: step.count), baselineFloorP99: floor.percentile(99)?.milliseconds,
                repeats: samples[step.id] ?? [])
        }
        onEvent(.ended(seconds: Double(SystemClocks.monotonic() - sweepStarted) / 1e9))
        return RunDocument(
            machine: .current, date: ISO8601DateFormatter().string(from: Date()), arguments: arguments,
            options: .init(
                backends: settings.backends.map(\.description), counts: settings.counts, starts: settings.patterns,
                tickMs: settings.tick.seconds * 1000, durationMs: settings.duration.seconds * 1000,
                repeats: settings.repeats, graceMs: settings.grace.seconds * 1000,
                floorPeriodUs: settings.floorPeriod.seconds * 1e6, floorWakeUps: settings.floorWakeUps,
                churnSamples: settings.churnSamples, minimumTickSamples: settings.minimumTickSamples, keys: settings.keys),
            floor: .init(
                summary: LatencySummary(floor),
                repeatP99s: floorRepeats.compactMap { $0.percentile(99)?.milliseconds }, histogram: floor),
            load: MachineLoad.combined(configurations.compactMap(\.load)),
            configurations: configurations,
            memory: MemoryLatency(
                smallSetBytes: MemoryProbe.smallSetBytes, largeSetBytes: MemoryProbe.largeSetBytes,
                smallSetNs: memoryRepeats.map(\.small), largeSetNs: memoryRepeats.map(\.large)))
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
}
