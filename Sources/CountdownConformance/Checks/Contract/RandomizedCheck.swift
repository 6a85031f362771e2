import Countdown
import CountdownSupport
import Dispatch
import Foundation
import Synchronization

/// In real time: random sequences of start / attach / cancel / pause / resume / query from several threads,
/// every answer and every delivered event checked against a model of the contract — not
/// against the backend itself.
///
/// Each key is driven by one thread only, so the model of that key is exact except for one
/// thing: when a countdown finishes. That is bounded below by the contract (never before
/// start + duration + the time provably spent paused), so the model only asserts what is
/// certain: before that bound a countdown is certainly still there; after it, either answer is
/// accepted. "Nothing after cancel or replace" is checked by ordering on the serial delivery
/// queue: a marker queued after the call returned runs after everything already queued, so a
/// callback that runs after the marker provably began after the call.
///
/// In virtual time it is a seeded simulation instead (``RandomizedSimulation``): one thread,
/// the clock advancing between operations, every failure replayed from its seed and shrunk.
enum RandomizedCheck {
    static let check = ConformanceCheck(
        "randomized", .contract,
        "random operations on many keys from several threads, every event checked against a model of the contract",
        body: run)

    static let threads = 4
    static let tick = Duration.milliseconds(10)

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: tick)
        if h.time.mode == .virtual { return try RandomizedSimulation.run(c, h) }
        let s = h.scheduler
        let seed = c.options.seed
        let keysPerThread = max(1, min(4, (s.profile.capacity ?? 16) / threads))
        let operationsPerThread = max(1, c.options.randomizedOperations / threads)
        let maximum = s.profile.maximumDuration
        let collected = Locked<[KeyModel]>([])
        let started = SystemClocks.monotonic()

        onThreads(threads) { thread in
            var random = SplitMix(seed: seed &+ UInt64(thread) &* 0x9E37)
            let keys = (0..<keysPerThread).map { KeyModel(key: "r\(thread)-\($0)") }
            for _ in 0..<operationsPerThread {
                let model = keys[random.below(keys.count)]
                let duration = min(maximum, .milliseconds(10 + Int64(random.below(70))))
                model.perform(RandomizedCall(choice: random.below(100)), duration: duration, on: h, in: c)
                // Paced (2 ms apart on average) so countdowns of 10–80 ms also run out
                // mid-sequence, not only get cancelled or replaced.
                Thread.sleep(forTimeInterval: Double(random.below(4000)) / 1e6)
            }
            collected.withLock { $0.append(contentsOf: keys) }
        }
        let elapsed = SystemClocks.monotonic() - started
        let callTime = collected.withLock { $0.reduce(0) { $0 + $1.callNanoseconds } }
        let keys = collected.withLock { $0 }

        // Let everything end: resume what is paused, then wait for every countdown to finish.
        for model in keys { model.resumeIfPaused(on: h, in: c) }
        c.expect(h.waitUntil(timeout: .seconds(30)) { s.activeCount == 0 },
                 "\(s.activeCount) countdowns still active 30 s after the last operation (seed \(seed))")
        // A key is free once its finish is decided, which the contract does not bound from its
        // delivery (a backend that keeps a store delivers it once the file is written): wait for
        // every finish owed, then a little for anything late, before judging.
        _ = h.waitUntil(timeout: .seconds(30)) { keys.allSatisfy { !$0.isAwaitingFinish } }
        h.settle(.milliseconds(50))
        h.drain()

        var finishes = 0
        for model in keys { finishes += model.verify(in: c, seed: seed) }
        let operations = operationsPerThread * threads
        c.figure(String(format: "%d operations on %d keys from %d threads in %.2f s (paced; %.1f µs per call); %d countdowns, %d finishes; seed %llu",
                        operations, keys.count, threads, Double(elapsed) / 1e9, Double(callTime) / Double(operations) / 1000,
                        keys.reduce(0) { $0 + $1.countdownCount }, finishes, seed))
    }
}

