import CountdownSupport
import Dispatch
import Foundation

/// The machine's timer floor: one thread sleeping to absolute deadlines with
/// `clock_nanosleep(TIMER_ABSTIME)`, the lateness of each wake-up recorded (what `cyclictest`
/// measures). No countdown backend can be woken more punctually than this.
enum FloorProbe {
    static func measure(period: UInt64, wakeUps: Int) -> LatencyHistogram {
        let result = Locked(LatencyHistogram())
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            nameCurrentThread("bench-floor")
            var histogram = LatencyHistogram()
            var deadline = SystemClocks.monotonic() + period
            for _ in 0..<wakeUps {
                SystemClocks.sleep(untilMonotonic: deadline)
                let now = SystemClocks.monotonic()
                histogram.record(now >= deadline ? now - deadline : 0)
                deadline += period
            }
            result.withLock { $0 = histogram }
            done.signal()
        }
        thread.start()
        done.wait()
        return result.withLock { $0 }
    }
}
