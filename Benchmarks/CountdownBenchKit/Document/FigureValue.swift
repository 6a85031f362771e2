/// One figure of one configuration, as every report shows it: the headline value, the samples
/// behind it, whether they resolve it, and how the repeats spread.
struct FigureValue: Codable, Sendable, Equatable {
    /// Percentiles: from the histograms of every repeat merged. Other figures: the median of the
    /// repeats.
    let value: Double
    /// The samples behind `value`: ticks, finishes or calls for a percentile, repeats otherwise.
    let samples: Int
    /// Some samples were cut off by the time limit: the true figure is this or more.
    let isLowerBound: Bool
    /// Too few samples for this percentile (a p99 of 4 ticks is their maximum).
    let isResolved: Bool
    /// The figure in each repeat on its own; nil with one repeat.
    let repeats: Spread?

    private enum CodingKeys: String, CodingKey {
        case value, samples, isLowerBound = "lowerBound", isResolved = "resolved", repeats
    }

    init(value: Double, samples: Int, isLowerBound: Bool, isResolved: Bool, repeats: Spread?) {
        self.value = value
        self.samples = samples
        self.isLowerBound = isLowerBound
        self.isResolved = isResolved
        self.repeats = repeats
    }

    // Compact: the flags only when they say something.
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(value, forKey: .value)
        try c.encode(samples, forKey: .samples)
        if isLowerBound { try c.encode(true, forKey: .isLowerBound) }
        if !isResolved { try c.encode(false, forKey: .isResolved) }
        try c.encodeIfPresent(repeats, forKey: .repeats)
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        value = try c.decode(Double.self, forKey: .value)
        samples = try c.decode(Int.self, forKey: .samples)
        isLowerBound = try c.decodeIfPresent(Bool.self, forKey: .isLowerBound) ?? false
        isResolved = try c.decodeIfPresent(Bool.self, forKey: .isResolved) ?? true
        repeats = try c.decodeIfPresent(Spread.self, forKey: .repeats)
    }
}
