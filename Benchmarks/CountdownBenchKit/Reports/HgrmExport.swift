import Foundation

/// A lateness histogram as HdrHistogram writes a percentile distribution (`.hgrm`, values in
/// ms, five reporting steps per half-distance to 100 %), so that HdrHistogram's plotter and the
/// tools built on it read the benchmark's samples.
struct HgrmExport {
    let histogram: LatencyHistogram

    func render() -> String {
        var out = "       Value     Percentile TotalCount 1/(1-Percentile)\n\n"
        let buckets = histogram.nonEmptyBuckets
        let total = histogram.count
        guard total > 0 else { return out + footer(mean: 0, deviation: 0) }
        var cumulative = 0
        var bucket = 0
        var percentile = 0.0
        while true {
            let rank = max(1, Int((percentile / 100 * Double(total)).rounded(.up)))
            while bucket < buckets.count && cumulative + buckets[bucket].count < rank {
                cumulative += buckets[bucket].count
                bucket += 1
            }
            guard bucket < buckets.count else { break }
            let reached = cumulative + buckets[bucket].count
            let ms = Double(buckets[bucket].value) / 1e6
            if reached >= total {
                out += String(format: "%12.3f %2.12f %10d\n", ms, 1.0, total)
                break
            }
            out += String(format: "%12.3f %2.12f %10d %14.2f\n", ms, percentile / 100, reached, 1 / (1 - percentile / 100))
            // HdrHistogram's reporting ticks: five per halving of the distance to 100 %.
            let halvings = floor(log2(100 / (100 - percentile))) + 1
            percentile += 100 / (5 * pow(2, halvings))
        }
        let mean = buckets.reduce(0.0) { $0 + Double($1.value) * Double($1.count) } / Double(total)
        let variance = buckets.reduce(0.0) { $0 + pow(Double($1.value) - mean, 2) * Double($1.count) } / Double(total)
        return out + footer(mean: mean / 1e6, deviation: variance.squareRoot() / 1e6)
    }

    private func footer(mean: Double, deviation: Double) -> String {
        String(format: "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", mean, deviation)
            + String(format: "#[Max     = %12.3f, Total count    = %12d]\n", Double(histogram.maximum) / 1e6, histogram.count)
            + String(format: "#[Buckets = %12d, SubBuckets     = %12d]\n", 58, 64)
    }

    /// A file name for a configuration's distribution: `timestamp-continuous-spread-n1000.hgrm`.
    static func fileName(for c: RunDocument.Configuration) -> String {
        let base = "\(c.backend)-\(c.starts.rawValue)-n\(c.count)".lowercased()
        let cleaned = base.map { $0.isLetter || $0.isNumber ? String($0) : "-" }.joined()
        return cleaned.split(separator: "-").joined(separator: "-") + ".hgrm"
    }
}
