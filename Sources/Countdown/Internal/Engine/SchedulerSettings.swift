import Dispatch

/// The validated settings every backend is made with (the package's Redis strategies too).
package struct SchedulerSettings: Sendable {
    package let tickInterval: Duration
    package let maximumDuration: Duration
    package let capacity: Int?
    package let deliveryQueue: DispatchQueue

    /// Refuses what no backend can honour; `label` names the default delivery queue.
    package init(
        tickInterval: Duration,
        maximumDuration: Duration,
        capacity: Int?,
        deliveryQueue: DispatchQueue?,
        label: String
    ) throws(CountdownError) {
        guard tickInterval > .zero else { throw .nonPositiveTickInterval(tickInterval) }
        guard tickInterval >= CountdownLimits.minimumTickInterval else {
            throw .tickIntervalTooShort(tickInterval, minimum: CountdownLimits.minimumTickInterval)
        }
        guard maximumDuration > .zero else {
            throw .invalidConfiguration("the maximum duration \(maximumDuration.text) is not positive")
        }
        // Deadlines are kept in nanoseconds of uptime; a century keeps them far from overflow.
        let century = Duration.seconds(100 * 365 * 24 * 3600)
        guard maximumDuration <= century else {
            throw .invalidConfiguration("the maximum duration \(maximumDuration.text) exceeds a century")
        }
        if let capacity, capacity < 1 {
            throw .invalidConfiguration("the capacity \(capacity) is below one")
        }
        self.tickInterval = tickInterval
        self.maximumDuration = maximumDuration
        self.capacity = capacity
        self.deliveryQueue = deliveryQueue ?? DispatchQueue(label: "\(label).delivery")
    }

    /// Refuses a coalescing tolerance outside zero ..< the tick interval.
    package func validate(tolerance: Duration) throws(CountdownError) {
        guard tolerance >= .zero, tolerance < tickInterval else {
            throw .invalidConfiguration(
                "the tolerance \(tolerance.text) is not between zero and the tick interval \(tickInterval.text)")
        }
    }
}

extension SchedulerSettings {
    /// Refuses a start's key or duration as the contract says: an empty key, a duration that is
    /// not positive or above the maximum.
    package func validate(key: String, duration: Duration) throws(CountdownError) {
        guard !key.isEmpty else { throw .emptyKey }
        guard duration > .zero else { throw .nonPositiveDuration(duration) }
        guard duration <= maximumDuration else { throw .durationAboveMaximum(duration, maximum: maximumDuration) }
    }
}
