import Foundation
import Testing

@testable import CountdownBenchKit

@Suite(.dedicatedThread) struct LatencyHistogramTests {
    @Test func percentilesFallInTheRightBucket() throws {
        var histogram = LatencyHistogram()
        for value in 1...10_000 { histogram.record(UInt64(value) * 1000) }  // 1 µs … 10 ms
        for (percent, exact) in [(50.0, 5_000_000.0), (90, 9_000_000), (99, 9_900_000), (99.9, 9_990_000)] {
            let p = try #require(histogram.percentile(percent))
            #expect(abs(Double(p.nanoseconds) - exact) / exact < 0.016, "p\(percent) = \(p.nanoseconds), not about \(exact)")
            #expect(!p.isLowerBound)
        }
        #expect(histogram.percentile(100)?.nanoseconds == 10_000_000, "the maximum is exact")
        #expect(histogram.count == 10_000)
        #expect(LatencyHistogram().percentile(50) == nil, "no samples, no percentile")
    }

    @Test func smallValuesAreExact() {
        var histogram = LatencyHistogram()
        for value: UInt64 in [0, 1, 2, 3, 63] { histogram.record(value) }
        #expect(histogram.percentile(20)?.nanoseconds == 0)
        #expect(histogram.percentile(60)?.nanoseconds == 2)
        #expect(histogram.percentile(100)?.nanoseconds == 63)
    }

    @Test func censoredValuesMakeLowerBounds() throws {
        var histogram = LatencyHistogram()
        for _ in 0..<90 { histogram.record(1_000) }
        for _ in 0..<10 { histogram.recordCensored(atLeast: 2_000_000_000) }
        let p50 = try #require(histogram.percentile(50)), p99 = try #require(histogram.percentile(99))
        #expect(!p50.isLowerBound, "the median is below every censored value")
        #expect(p99.isLowerBound && p99.nanoseconds >= 1_968_000_000, "p99 falls among the censored: \(p99)")
        #expect(histogram.censoredCount == 10)
        #expect(abs(histogram.fraction(above: 1_000_000) - 0.10) < 1e-9)
    }

    @Test func mergeAndJSONKeepEverything() throws {
        var a = LatencyHistogram(), b = LatencyHistogram()
        for value in stride(from: UInt64(100), to: 1_000_000, by: 997) { a.record(value) }
        b.recordCensored(atLeast: 5_000_000)
        a.merge(b)
        let decoded = try JSONDecoder().decode(LatencyHistogram.self, from: JSONEncoder().encode(a))
        #expect(decoded.count == a.count && decoded.censoredCount == 1 && decoded.maximum == 5_000_000)
        for percent in [10.0, 50, 90, 99, 99.9, 100] {
            #expect(decoded.percentile(percent) == a.percentile(percent), "p\(percent) changed through JSON")
        }
    }
}
