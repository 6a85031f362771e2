import CountdownSupport
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The machine's timer floor: one thread sleeping to absolute deadlines with
/// `clock_nanosleep(TIMER_ABSTIME)`, the lateness of each wake-up recorded (what `cyclictest`
/// measures). No countdown backend can be woken more punctually than this.
///
/// Run alone (``measure(period:wakeUps:)``) it is the machine's baseline; run through a
/// configuration's window (``start(period:)`` … ``stop()``) it is the floor of the same
/// minutes, and its own CPU time is kept apart so that the configuration is not charged for it.
final class FloorProbe: Sendable {
    private let histogram = Locked(LatencyHistogram())
    private let stopRequested = Atomic<Bool>(false)
    /// The floor thread's CPU time so far, ns, updated after every wake-up.
    private let cpu = Atomic<UInt64>(0)
    /// The times it slept and was woken (a deadline already past is no wake-up).
    private let sleeps = Atomic<Int>(0)
    private let stopped = DispatchSemaphore(value: 0)

    private init(period: UInt64, wakeUps: Int?) {
        let thread = Thread { [self] in
            nameCurrentThread("bench-floor")
            var local = LatencyHistogram()
            var deadline = SystemClocks.monotonic() + period
            var remaining = wakeUps ?? .max
            while remaining > 0 && !stopRequested.load(ordering: .relaxed) {
                let sleeping = SystemClocks.monotonic() < deadline
                SystemClocks.sleep(untilMonotonic: deadline)
                let now = SystemClocks.monotonic()
                local.record(now >= deadline ? now - deadline : 0)
                // The CPU first, then the count: a reader that sees a wake-up counted sees its CPU.
                cpu.store(Self.threadCPU(), ordering: .relaxed)
                if sleeping { sleeps.add(1, ordering: .releasing) }
                deadline += period
                remaining -= 1
            }
            histogram.withLock { $0 = local }
            stopped.signal()
        }
        thread.start()
    }

    /// `wakeUps` wake-ups every `period` ns, alone: the machine's baseline.
    static func measure(period: UInt64, wakeUps: Int) -> LatencyHistogram {
        FloorProbe(period: period, wakeUps: wakeUps).stop(early: false)
    }

    /// Starts a floor thread that wakes every `period` ns until ``stop()``.
    static func start(period: UInt64) -> FloorProbe { FloorProbe(period: period, wakeUps: nil) }

    /// The CPU time the floor thread has used so far, ns.
    var cpuNanoseconds: UInt64 { cpu.load(ordering: .relaxed) }

    /// How often the floor thread has been woken so far, and its CPU time then, read together:
    /// what one wake-up costs the machine, `clock_nanosleep` to an absolute deadline (as
    /// `cyclictest` wakes).
    var wakeUps: (count: Int, cpu: UInt64) {
        let count = sleeps.load(ordering: .acquiring)
        return (count, cpu.load(ordering: .relaxed))
    }

    /// Ends the thread and returns every wake-up's lateness.
    func stop() -> LatencyHistogram { stop(early: true) }

    private func stop(early: Bool) -> LatencyHistogram {
        if early { stopRequested.store(true, ordering: .relaxed) }
        stopped.wait()
        return histogram.withLock { $0 }
    }

    private static func threadCPU() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
