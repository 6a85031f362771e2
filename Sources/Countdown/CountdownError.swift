/// Why a scheduler refused a request. A refused request changes nothing.
public enum CountdownError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Keys identify countdowns; the empty string is not a key.
    case emptyKey
    /// A countdown must last some time.
    case nonPositiveDuration(Duration)
    /// The duration exceeds what the backend declares it can count.
    case durationAboveMaximum(Duration, maximum: Duration)
    /// The tick interval must be positive.
    case nonPositiveTickInterval(Duration)
    /// Ticks shorter than ``CountdownLimits/minimumTickInterval`` would spin a core.
    case tickIntervalTooShort(Duration, minimum: Duration)
    /// The backend already runs as many countdowns as it declares it can; the request was
    /// refused, not dropped.
    case capacityExceeded(capacity: Int)
    /// The backend's own configuration is out of range (a capacity below one, say).
    case invalidConfiguration(String)
    /// ``CountdownScheduler/shutdown()`` was called; the scheduler takes no more countdowns.
    case shutDown
    /// The store that holds the countdowns (a Redis server, for a fleet) could not answer: why,
    /// and the server's or the system's own text. A call that could not be sent was not carried
    /// out; one whose answer was lost after the retries a backend makes may have been, so what
    /// it did is unknown: ask again (`remaining(key:)`), or make the call again, which a fleet
    /// backend answers as the same kind of call (a start then attaches).
    case unavailable(UnavailableReason, String)

    public var description: String {
        switch self {
        case .emptyKey:
            "the key is empty"
        case .nonPositiveDuration(let d):
            "the duration \(d.text) is not positive"
        case .durationAboveMaximum(let d, let maximum):
            "the duration \(d.text) exceeds this backend's maximum of \(maximum.text)"
        case .nonPositiveTickInterval(let t):
            "the tick interval \(t.text) is not positive"
        case .tickIntervalTooShort(let t, let minimum):
            "the tick interval \(t.text) is below the minimum of \(minimum.text)"
        case .capacityExceeded(let capacity):
            "this backend already runs its declared capacity of \(capacity) countdowns"
        case .invalidConfiguration(let why):
            "invalid configuration: \(why)"
        case .shutDown:
            "the scheduler has been shut down"
        case .unavailable(let reason, let text):
            "the shared store could not answer (\(reason.rawValue)): \(text)"
        }
    }
}
