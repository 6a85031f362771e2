import Countdown
import CountdownSupport
import Foundation

/// The randomized check in virtual time: a seeded simulation. Random operations on many keys
/// from one thread, the clock advancing between them, every answer and event judged against the
/// same model as in real time (``KeyModel``). The operations are a list drawn from the seed
/// before the run, so a failure replays exactly from its seed, and is shrunk, as property-based
/// testing shrinks a counterexample, to the shortest list found that still fails.
enum RandomizedSimulation {
    /// One step of a simulation: an operation on a key, then the clock moves on.
    struct Operation: Sendable, CustomStringConvertible {
        let key: Int
        /// The model's choice of operation, 0..<100 (``RandomizedCall``).
        let choice: Int
        let duration: Duration
        /// How far the clock moves after the operation.
        let advance: Duration

        var call: RandomizedCall { RandomizedCall(choice: choice) }

        var description: String {
            let name = "k\(key)"
            let call = switch call {
            case .start: "start(\(name), \(duration))"
            case .attach: "attach(\(name))"
            case .cancel: "cancel(\(name))"
            case .pause: "pause(\(name))"
            case .resume: "resume(\(name))"
            case .remaining: "remaining(\(name))"
            }
            return advance == .zero ? call : "\(call), +\(advance)"
        }
    }

    static let keys = 64
    /// Half the operations go to these few keys. A uniform draw over 64 keys comes back to a key
    /// about 64 operations, some 300 ms of virtual time, later, long after its 10–80 ms countdown
    /// ended, so a pause, cancel or restart of a *running* countdown happened only by luck (a
    /// backend that restarts a key paused after a cancel-while-paused passed some seeds). A hot
    /// key meets its next operation about every 40 ms.
    static let hotKeys = 4
    static let tick = Duration.milliseconds(10)

    /// Keys like real ones (20–32 bytes), so that the table hashes what an app's keys make it hash.
    static func key(_ index: Int) -> String { "rate-limit:user:\(1_000_000 + index)" }

    /// The operations a seed draws, `count` of them.
    static func operations(seed: UInt64, count: Int, maximum: Duration) -> [Operation] {
        var random = SplitMix(seed: seed)
        return (0..<count).map { _ in
            let key = random.below(2) == 0 ? random.below(hotKeys) : random.below(keys)
            let choice = random.below(100)
            let duration = min(maximum, .milliseconds(10 + Int64(random.below(70))))
            // Half the operations happen at the same instant as the one before.
            let advance = random.below(2) == 0 ? Duration.zero : .milliseconds(Int64(1 + random.below(20)))
            return Operation(key: key, choice: choice, duration: duration, advance: advance)
        }
    }

    /// What one play of a list of operations found.
    struct Outcome {
        /// The operation after which the first failure was recorded (the list's count when it
        /// was found in the final verification), or nil when nothing failed.
        var firstFailure: Int?
        var countdowns = 0
        var finishes = 0
        var trace: (digest: UInt64, events: Int) = (0, 0)
    }

    static func run(_ c: CheckContext, _ h: Harness) throws {
        let seed = c.options.seed, count = c.options.randomizedOperations
        let operations = operations(seed: seed, count: count, maximum: h.scheduler.profile.maximumDuration)
        let began = SystemClocks.monotonic()
        let outcome = play(operations[...], on: h, in: c, seed: seed)
        let seconds = Double(SystemClocks.monotonic() - began) / 1e9
        c.figure(String(format: "%d operations on %d keys in %.2f s of real time, %@ of virtual time; %d countdowns, %d finishes, %d events (trace %016llx); seed %llu",
                        count, keys, seconds, DurationText.nanoseconds(Double(h.now())), outcome.countdowns, outcome.finishes,
                        outcome.trace.events, outcome.trace.digest, seed))
        guard let failure = outcome.firstFailure else { return }
        let (shortest, runs) = shrink(Array(operations[...min(failure, operations.count - 1)]), in: c, seed: seed)
        let scratch = c.fresh()
        defer { scratch.shutDownSchedulers() }
        if let replay = try? scratch.makeScheduler(tick: tick) { _ = play(shortest[...], on: replay, in: scratch, seed: seed) }
        c.fail("seed \(seed): the shortest failing sequence found has \(shortest.count) of \(count) operations (\(runs) runs; replay with --seed \(seed)): "
            + shortest.map(\.description).joined(separator: "; ")
            + (scratch.failures.first.map { " — it fails with: \($0)" } ?? ""))
    }

    /// Plays `operations` on `h`, then lets every countdown end, judging as it goes.
    static func play(_ operations: ArraySlice<Operation>, on h: Harness, in c: CheckContext, seed: UInt64) -> Outcome {
        let models = (0..<keys).map { KeyModel(key: key($0)) }
        var outcome = Outcome()
        for (number, operation) in zip(0..., operations) {
            let model = models[operation.key]
            model.perform(operation.call, duration: operation.duration, on: h, in: c)
            h.settle(operation.advance)
            if number % 256 == 255 {
                for model in models { outcome.finishes += model.verifyOld(in: c, seed: seed, age: 64) }
            }
            if outcome.firstFailure == nil, !c.failures.isEmpty { outcome.firstFailure = number }
        }
        for model in models { model.resumeIfPaused(on: h, in: c) }
        let s = h.scheduler
        c.expect(h.waitUntil(timeout: .seconds(30)) { s.activeCount == 0 },
                 "\(s.activeCount) countdowns still active 30 s (virtual) after the last operation (seed \(seed))")
        h.settle(.milliseconds(50))
        h.drain()
        for model in models {
            outcome.finishes += model.verify(in: c, seed: seed)
            outcome.countdowns += model.countdownCount
        }
        if outcome.firstFailure == nil, !c.failures.isEmpty { outcome.firstFailure = operations.count }
        outcome.trace = h.queue.trace
        return outcome
    }

    /// The shortest sublist of `operations` found that still fails: chunks removed while the
    /// rest fails, halving the chunk when none can go (delta debugging), within a budget of
    /// runs, and of real time in real time. In virtual time the budget is the operations played
    /// instead, so that a seed replays the same shortest sequence however loaded the machine:
    /// CI cut a shrink at 20 s after 40 runs, and the replay, done after 51, printed another.
    /// Returns it and the number of runs it took.
    static func shrink(_ operations: [Operation], in c: CheckContext, seed: UInt64) -> ([Operation], Int) {
        var current = operations, runs = 0, played = 0
        var virtual: Bool?
        let deadline = SystemClocks.monotonic() + 20_000_000_000
        func within() -> Bool {
            runs < 2_000 && (virtual == true ? played < 400_000 : SystemClocks.monotonic() < deadline)
        }
        func fails(_ candidate: [Operation]) -> Bool {
            runs += 1
            played += candidate.count
            let scratch = c.fresh()
            defer { scratch.shutDownSchedulers() }
            guard let h = try? scratch.makeScheduler(tick: tick) else { return false }
            virtual = virtual ?? (h.time.mode == .virtual)
            return play(candidate[...], on: h, in: scratch, seed: seed).firstFailure != nil
        }
        var chunk = max(1, current.count / 2)
        while within() {
            var start = 0, removed = false
            while start < current.count, within() {
                var candidate = current
                candidate.removeSubrange(start..<min(start + chunk, current.count))
                if fails(candidate) {
                    current = candidate
                    removed = true
                } else {
                    start += chunk
                }
            }
            if chunk == 1 && !removed { break }
            if !removed { chunk = max(1, chunk / 2) }
        }
        return (current, runs)
    }
}
