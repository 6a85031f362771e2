#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// CLOCK_MONOTONIC in nanoseconds: the clock `DispatchTime` and the backends' timers use on
/// Linux, read straight from the vDSO (no allocation, ~20 ns), so that a timestamp taken inside
/// an observer costs as little as possible.
enum Monotonic {
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Sleeps until the absolute instant `deadline` (nanoseconds on CLOCK_MONOTONIC): no drift
    /// accumulates over a loop of sleeps, which is what the floor measures and the pacer needs.
    static func sleep(until deadline: UInt64) {
        #if os(Linux)
        var target = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
        #else
        // Darwin has no clock_nanosleep; a relative sleep is close enough for pacing, and the
        // published figures are Linux figures.
        let now = now()
        guard deadline > now else { return }
        let delta = deadline - now
        var request = timespec(tv_sec: Int(delta / 1_000_000_000), tv_nsec: Int(delta % 1_000_000_000))
        while nanosleep(&request, &request) == -1 && errno == EINTR {}
        #endif
    }
}
