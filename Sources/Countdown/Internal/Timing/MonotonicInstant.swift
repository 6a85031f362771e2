import CountdownSupport
import Dispatch

/// A point on the monotonic clock a backend's timers are scheduled on, in nanoseconds: the
/// clock `DispatchTime` reads (``SystemClocks/monotonic()``), but for the task backend, whose
/// tasks sleep on `ContinuousClock` and whose instants are that clock's
/// (``SystemClocks/continuous()``). Instants of the two are never compared with each other.
struct MonotonicInstant: Comparable, Hashable, Sendable {
    var nanoseconds: UInt64

    static var now: MonotonicInstant {
        MonotonicInstant(nanoseconds: SystemClocks.monotonic())
    }

    var dispatchTime: DispatchTime { DispatchTime(uptimeNanoseconds: nanoseconds) }

    static func < (a: MonotonicInstant, b: MonotonicInstant) -> Bool {
        a.nanoseconds < b.nanoseconds
    }

    /// Saturates at the clock's ends instead of trapping.
    static func + (instant: MonotonicInstant, offset: Duration) -> MonotonicInstant {
        instant.adding(nanoseconds: offset.nanoseconds)
    }

    /// This instant moved by `ns` nanoseconds, saturating at the clock's ends: for an offset
    /// already in nanoseconds (converting a `Duration` is an `Int128` division).
    func adding(nanoseconds ns: Int64) -> MonotonicInstant {
        if ns >= 0 {
            let (sum, overflow) = nanoseconds.addingReportingOverflow(UInt64(ns))
            return MonotonicInstant(nanoseconds: overflow ? .max : sum)
        }
        let magnitude = ns == .min ? UInt64(Int64.max) + 1 : UInt64(-ns)
        return MonotonicInstant(nanoseconds: nanoseconds > magnitude ? nanoseconds - magnitude : 1)
    }

    static func - (later: MonotonicInstant, earlier: MonotonicInstant) -> Duration {
        if later.nanoseconds >= earlier.nanoseconds {
            return .nanoseconds(Int64(clamping: later.nanoseconds - earlier.nanoseconds))
        }
        return .nanoseconds(-Int64(clamping: earlier.nanoseconds - later.nanoseconds))
    }
}

extension Duration {
    var dispatchInterval: DispatchTimeInterval {
        .nanoseconds(Int(clamping: nanoseconds))
    }
}
