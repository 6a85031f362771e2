/// A lateness histogram's headline percentiles, in ms, with the samples behind them.
struct LatencySummary: Codable, Sendable, Equatable {
    let samples: Int
    let p50: Double?
    let p90: Double?
    let p99: Double?
    let p999: Double?
    let max: Double?

    init(_ histogram: LatencyHistogram) {
        samples = histogram.count
        func ms(_ p: Double, needs: Int) -> Double? {
            histogram.count >= needs ? histogram.percentile(p)?.milliseconds : nil
        }
        p50 = ms(50, needs: 1)
        p90 = ms(90, needs: 10)
        p99 = ms(99, needs: 100)
        p999 = ms(99.9, needs: 1000)
        max = ms(100, needs: 1)
    }
}
