/// Why a ``VirtualScheduler`` refused to move its clock. A refused call moves nothing.
public enum VirtualTimeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// `advance(by:)` with a negative interval: virtual time, like real time, only goes forward.
    case negativeInterval(Duration)
    /// `advance(to:)` with an instant before ``VirtualScheduler/now``.
    case instantInThePast(Duration, now: Duration)
    /// `advance` was called while another `advance` was under way: from an observer it
    /// delivers to, or from another thread. Only one caller drives a clock.
    case alreadyAdvancing

    public var description: String {
        switch self {
        case .negativeInterval(let d):
            "cannot advance by \(d.text): virtual time only goes forward"
        case .instantInThePast(let instant, let now):
            "cannot advance to \(instant.text): the clock already reads \(now.text)"
        case .alreadyAdvancing:
            "advance was called while another advance was under way (from an observer, or from another thread)"
        }
    }
}
