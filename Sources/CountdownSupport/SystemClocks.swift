#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// The package's one wrapper of the system clocks, read without allocating (a vDSO call on
/// Linux, about 20 ns), so that a timestamp taken inside an observer or a wake-up costs as
/// little as possible. Public and inlinable for that reason (see ``Locked``).
public enum SystemClocks {
    /// The monotonic clock, in nanoseconds: the clock `DispatchTime` and every backend's timers
    /// are scheduled on (`CLOCK_MONOTONIC` on Linux; it stops while the machine sleeps).
    @inlinable
    public static func monotonic() -> UInt64 {
        #if os(Linux)
        read(CLOCK_MONOTONIC)
        #else
        DispatchTime.now().uptimeNanoseconds
        #endif
    }

    /// The wall clock (`CLOCK_REALTIME`, what `Date` reads), in nanoseconds since 1970; it moves
    /// when someone sets the system's clock.
    @inlinable
    public static func wall() -> Int64 {
        Int64(bitPattern: read(CLOCK_REALTIME))
    }

    /// The clock `ContinuousClock` reads, in nanoseconds since boot: monotonic, counting through
    /// the machine's sleep (`CLOCK_BOOTTIME` on Linux).
    @inlinable
    public static func continuous() -> Int64 {
        #if os(Linux)
        Int64(bitPattern: read(CLOCK_BOOTTIME))
        #else
        Int64(bitPattern: clock_gettime_nsec_np(CLOCK_MONOTONIC_RAW))
        #endif
    }

    /// The CPU time the calling thread has used, in nanoseconds (`CLOCK_THREAD_CPUTIME_ID`):
    /// what a piece of work cost, its waits for the disk or for other threads left out.
    @inlinable
    public static func threadCPU() -> UInt64 {
        read(CLOCK_THREAD_CPUTIME_ID)
    }

    /// Sleeps until the absolute instant `deadline` on ``monotonic()``: no drift accumulates
    /// over a loop of sleeps (what a pacer and a timer floor need).
    @inlinable
    public static func sleep(untilMonotonic deadline: UInt64) {
        #if os(Linux)
        var target = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, nil) == EINTR {}
        #else
        // Darwin has no clock_nanosleep; a relative sleep is close enough for pacing.
        let now = monotonic()
        guard deadline > now else { return }
        let delta = deadline - now
        var request = timespec(tv_sec: Int(delta / 1_000_000_000), tv_nsec: Int(delta % 1_000_000_000))
        while nanosleep(&request, &request) == -1 && errno == EINTR {}
        #endif
    }

    @usableFromInline
    static func read(_ clock: clockid_t) -> UInt64 {
        var time = timespec()
        clock_gettime(clock, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
