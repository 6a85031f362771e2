/// What one dependent memory load took on the machine, measured alone before each repeat
/// (``MemoryProbe``), in a working set that fits a last-level cache and in one that does not.
struct MemoryLatency: Codable, Sendable, Equatable {
    let smallSetBytes: Int
    let largeSetBytes: Int
    /// ns per load in each repeat.
    let smallSetNs: [Double]
    let largeSetNs: [Double]

    var smallSet: Spread? { Spread(smallSetNs) }
    var largeSet: Spread? { Spread(largeSetNs) }

    /// Two runs whose memory differs more than this (median against median, either set) came
    /// from machines, or minutes, that a table at scale meets differently.
    static let differentRatio = 1.5

    func differs(from other: MemoryLatency) -> Bool {
        func ratio(_ a: Spread?, _ b: Spread?) -> Double {
            guard let a, let b, a.median > 0, b.median > 0 else { return 1 }
            return max(a.median / b.median, b.median / a.median)
        }
        return ratio(smallSet, other.smallSet) > Self.differentRatio || ratio(largeSet, other.largeSet) > Self.differentRatio
    }
}
