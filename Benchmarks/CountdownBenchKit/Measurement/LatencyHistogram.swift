/// Nanosecond values counted in log-linear buckets (64 per power of two, so a bucket is at
/// most 1.6 % wide): constant memory and an O(1) `record`, whatever the number of samples.
///
/// A value can be *censored*: a lower bound for an event that had not happened when the time
/// limit ended the measurement. Percentiles count censored values where their lower bound
/// falls and say so (``Percentile/isLowerBound``), rather than leaving them out and flattering
/// a backend that could not keep up.
struct LatencyHistogram: Sendable {
    private static let subBucketBits = 6
    private static let subBuckets = 1 << subBucketBits
    private static let bucketCount = subBuckets + (64 - subBucketBits) * subBuckets

    private var counts: [UInt32]
    private(set) var count = 0
    private(set) var censoredCount = 0
    /// The least censored value: percentiles at or above it are lower bounds.
    private(set) var leastCensored = UInt64.max
    private(set) var maximum: UInt64 = 0
    private(set) var minimum = UInt64.max

    init() { counts = [UInt32](repeating: 0, count: Self.bucketCount) }

    var isEmpty: Bool { count == 0 }

    mutating func record(_ value: UInt64) {
        counts[Self.index(of: value)] &+= 1
        count += 1
        maximum = max(maximum, value)
        minimum = min(minimum, value)
    }

    /// A value known only to be at least `value`.
    mutating func recordCensored(atLeast value: UInt64) {
        record(value)
        censoredCount += 1
        leastCensored = min(leastCensored, value)
    }

    mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices where other.counts[index] != 0 { counts[index] &+= other.counts[index] }
        count += other.count
        censoredCount += other.censoredCount
        leastCensored = min(leastCensored, other.leastCensored)
        maximum = max(maximum, other.maximum)
        minimum = min(minimum, other.minimum)
    }

    struct Percentile: Sendable, Equatable {
        let nanoseconds: UInt64
        /// Censored values reach this far: the true figure is this or more.
        let isLowerBound: Bool
        var milliseconds: Double { Double(nanoseconds) / 1e6 }
    }

    /// The value below which `percent` % of the samples fall (the bucket's middle, never above
    /// the exact maximum); nil without samples.
    func percentile(_ percent: Double) -> Percentile? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((percent / 100 * Double(count)).rounded(.up)))
        if rank >= count { return Percentile(nanoseconds: maximum, isLowerBound: censoredCount > 0) }
        var seen = 0
        for index in counts.indices where counts[index] != 0 {
            seen += Int(counts[index])
            if seen >= rank {
                let value = min(Self.middle(of: index), maximum)
                return Percentile(nanoseconds: value, isLowerBound: censoredCount > 0 && value >= leastCensored)
            }
        }
        return Percentile(nanoseconds: maximum, isLowerBound: censoredCount > 0)
    }

    /// The share of samples above `threshold` (censored ones included).
    func fraction(above threshold: UInt64) -> Double {
        guard count > 0 else { return 0 }
        var above = 0
        for index in counts.indices where counts[index] != 0 && Self.lowerBound(of: index) > threshold {
            above += Int(counts[index])
        }
        return Double(above) / Double(count)
    }

    /// The non-empty buckets in order: each one's value (its middle, never above the maximum, in
    /// ns) and count. What the .hgrm export walks.
    var nonEmptyBuckets: [(value: UInt64, count: Int)] {
        counts.indices.filter { counts[$0] != 0 }.map { (min(Self.middle(of: $0), maximum), Int(counts[$0])) }
    }

    // MARK: - Buckets

    private static func index(of value: UInt64) -> Int {
        guard value >= UInt64(subBuckets) else { return Int(value) }
        let exponent = 63 - value.leadingZeroBitCount
        let shift = exponent - subBucketBits
        let sub = Int(value >> UInt64(shift)) - subBuckets
        return subBuckets + shift * subBuckets + sub
    }

    private static func lowerBound(of index: Int) -> UInt64 {
        guard index >= subBuckets else { return UInt64(index) }
        let shift = (index - subBuckets) / subBuckets
        let sub = (index - subBuckets) % subBuckets
        return UInt64(subBuckets + sub) << UInt64(shift)
    }

    private static func middle(of index: Int) -> UInt64 {
        guard index >= subBuckets else { return UInt64(index) }
        let shift = (index - subBuckets) / subBuckets
        return lowerBound(of: index) + (UInt64(1) << UInt64(shift)) / 2
    }
}

/// Written sparse and compact: `sparse` is a flat list of pairs, the gap from the previous
/// non-empty bucket's index (from -1) then its count. Version 1 run.json files wrote `buckets`,
/// a list of [lower bound ns, count]; both are read.
extension LatencyHistogram: Codable {
    private enum CodingKeys: String, CodingKey {
        case count, censoredCount, leastCensored, minimum, maximum, sparse, buckets
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(count, forKey: .count)
        if censoredCount > 0 {
            try container.encode(censoredCount, forKey: .censoredCount)
            try container.encode(leastCensored, forKey: .leastCensored)
        }
        if count > 0 {
            try container.encode(minimum, forKey: .minimum)
            try container.encode(maximum, forKey: .maximum)
        }
        var sparse: [UInt64] = []
        var previous = -1
        for index in counts.indices where counts[index] != 0 {
            sparse.append(UInt64(index - previous))
            sparse.append(UInt64(counts[index]))
            previous = index
        }
        try container.encode(sparse, forKey: .sparse)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init()
        if let sparse = try container.decodeIfPresent([UInt64].self, forKey: .sparse) {
            guard sparse.count % 2 == 0 else {
                throw DecodingError.dataCorruptedError(forKey: .sparse, in: container, debugDescription: "sparse is pairs of gap and count")
            }
            var index = -1
            for pair in stride(from: 0, to: sparse.count, by: 2) {
                index += Int(clamping: sparse[pair])
                guard sparse[pair] > 0, index < counts.count else {
                    throw DecodingError.dataCorruptedError(forKey: .sparse, in: container, debugDescription: "a bucket index out of range")
                }
                counts[index] &+= UInt32(clamping: sparse[pair + 1])
            }
        } else {
            for pair in try container.decode([[UInt64]].self, forKey: .buckets) {
                guard pair.count == 2 else {
                    throw DecodingError.dataCorruptedError(forKey: .buckets, in: container, debugDescription: "a bucket is [lower bound, count]")
                }
                counts[Self.index(of: pair[0])] &+= UInt32(clamping: pair[1])
            }
        }
        count = try container.decode(Int.self, forKey: .count)
        censoredCount = try container.decodeIfPresent(Int.self, forKey: .censoredCount) ?? 0
        leastCensored = try container.decodeIfPresent(UInt64.self, forKey: .leastCensored) ?? .max
        minimum = try container.decodeIfPresent(UInt64.self, forKey: .minimum) ?? .max
        maximum = try container.decodeIfPresent(UInt64.self, forKey: .maximum) ?? 0
    }
}
