import CountdownSupport
import Dispatch
import Foundation
import Synchronization

/// Samples the process while a configuration runs, on a thread of its own: peak threads (every
/// 10 ms), and how long a block waits for libdispatch's global pool
/// (one probe every 10 ms, so that a configuration's window resolves a p99). The last is why the operation-queue backend starts late: its
/// sleeping workers hold the pool's threads, which every other queue in the process, the
/// delivery queue and Swift concurrency included, also needs.
final class ResourceSampler: Sendable {
    struct Peaks: Sendable {
        var threads = 0
        var poolWait = LatencyHistogram()
        /// When each probe still waiting for a pool thread was queued.
        var waitingSince: Set<UInt64> = []
        var isFinished = false
    }

    private let peaks = Locked(Peaks())
    /// Wake-ups the sampler causes: its own thread's, and a pool thread's for each probe.
    private let wakeUps = Atomic<Int>(0)

    /// The wake-ups the sampler has caused so far: the benchmark's, not the scheduler's.
    var ownWakeUps: Int { wakeUps.load(ordering: .relaxed) }
    /// The sampler thread's own CPU time so far, ns, as of its last sample: left out of the
    /// scheduler's CPU as its wake-ups are left out of the scheduler's (reading /proc every
    /// 10 ms costs about 1 % of a core here, 10 µs an event at 1 000 events a second). Its
    /// pool probes' blocks, a few instructions each, are not counted apart.
    var ownCPU: UInt64 { cpu.load(ordering: .relaxed) }
    private let cpu = Atomic<UInt64>(0)
    private let stopRequested = Locked(false)
    private let stopped = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in
            nameCurrentThread("bench-sampler")
            sample()
        }
        thread.start()
    }

    private func sample() {
        var nextProbe: UInt64 = 0
        while !stopRequested.withLock({ $0 }) {
            if let status = ProcessStatus.now() {
                peaks.withLock { $0.threads = max($0.threads, status.threads) }
            }
            let now = SystemClocks.monotonic()
            if now >= nextProbe {
                nextProbe = now + 10_000_000
                wakeUps.add(1, ordering: .relaxed)
                peaks.withLock { _ = $0.waitingSince.insert(now) }
                DispatchQueue.global().async { [peaks] in
                    let waited = SystemClocks.monotonic() - now
                    peaks.withLock { peaks in
                        guard !peaks.isFinished else { return }
                        peaks.waitingSince.remove(now)
                        peaks.poolWait.record(waited)
                    }
                }
            }
            cpu.store(SystemClocks.threadCPU(), ordering: .relaxed)
            SystemClocks.sleep(untilMonotonic: now + 10_000_000)
            wakeUps.add(1, ordering: .relaxed)
        }
        stopped.signal()
    }

    /// Stops sampling and returns the peaks. A pool probe still waiting counts as a lower
    /// bound, how long it has waited so far: with the pool starved, those are the figure.
    func finish() -> Peaks {
        stopRequested.withLock { $0 = true }
        stopped.wait()
        let now = SystemClocks.monotonic()
        return peaks.withLock { peaks in
            peaks.isFinished = true
            for since in peaks.waitingSince { peaks.poolWait.recordCensored(atLeast: now - since) }
            peaks.waitingSince = []
            return peaks
        }
    }
}
