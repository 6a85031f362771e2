import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `concurrency` check: calls from many threads at once keep every observer's events well formed.
enum ConcurrencyCheck {
    static let check = ConformanceCheck(
        "concurrency", .contract,
        "calls from many threads at once keep every observer's events well formed",
        body: run)

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(5))
        let s = h.scheduler
        let keys = (0..<16).map { "key\($0)" }
        let logs = Locked<[Recorder]>([])
        let threads = 8, perThread = 150
        let started = SystemClocks.monotonic()  // what the calls took, in real time
        onThreads(threads) { thread in
            var random = SplitMix(seed: c.options.seed &+ UInt64(thread))
            for _ in 0..<perThread {
                let key = keys[random.below(keys.count)]
                switch random.below(6) {
                case 0, 1:
                    let log = h.recorder()
                    logs.withLock { $0.append(log) }
                    _ = try? s.start(key: key, duration: .milliseconds(10 + Int64(random.below(60))), observer: log.observer)
                case 2: _ = s.cancel(key: key)
                case 3: _ = s.pause(key: key)
                case 4: _ = s.resume(key: key)
                default: _ = s.remaining(key: key)
                }
            }
        }
        let elapsed = SystemClocks.monotonic() - started
        for key in keys { _ = s.resume(key: key) }
        var left = 0
        c.expect(h.waitUntil(timeout: .seconds(20)) { left = s.activeCount; return left == 0 }, "\(left) countdowns never finished")
        // A key is free once its finish is decided; the finish may be heard later (a backend
        // with a store delivers it once written, and its writer may wait for a turn of the CPU).
        let all = logs.withLock { $0 }
        c.expect(h.waitUntil(timeout: .seconds(20)) { all.contains { !$0.finishes.isEmpty } },
                 "no countdown's finish was heard within 20 s of the last key coming free")
        h.drain()
        for (i, log) in all.enumerated() { EventRules.wellFormed(log.all, "observer \(i)", in: c) }
        c.figure("\(threads * perThread) calls from \(threads) threads in \(DurationText.nanoseconds(Double(elapsed)))")
    }
}
