/// A figure over the repeats of a configuration: the median, the least and the largest.
struct Spread: Codable, Sendable, Equatable {
    let median: Double
    let min: Double
    let max: Double

    init?(_ values: [Double]) {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        min = sorted[0]
        max = sorted[sorted.count - 1]
    }

    /// Largest over least: how far the repeats disagree (1 when they agree; infinite when one is 0
    /// and another is not).
    var ratio: Double {
        if max == min { return 1 }
        return min > 0 ? max / min : .infinity
    }
}
