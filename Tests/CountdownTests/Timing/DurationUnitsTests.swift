import CountdownSupport
import Testing

@Suite("Duration units")
struct DurationUnitsTests {
    @Test("whole nanoseconds truncate toward zero and saturate at Int64's bounds")
    func nanoseconds() {
        #expect(Duration.seconds(3).nanoseconds == 3_000_000_000)
        #expect((Duration.seconds(-3) - .nanoseconds(7)).nanoseconds == -3_000_000_007)
        #expect(Duration(attoseconds: 999_999_999).nanoseconds == 0, "below a nanosecond")
        #expect(Duration(attoseconds: -1_999_999_999).nanoseconds == -1, "toward zero, not down")
        #expect(Duration.seconds(9_223_372_036).nanoseconds == 9_223_372_036_000_000_000)
        #expect(Duration.seconds(9_223_372_037).nanoseconds == .max, "saturates")
        #expect(Duration.seconds(Int64.min).nanoseconds == .min, "saturates")
        #expect(Duration.nanoseconds(Int64.min).nanoseconds == .min, "the lowest that fits")
        #expect((Duration.nanoseconds(Int64.min) - .nanoseconds(1)).nanoseconds == .min, "saturates")
        #expect(Duration.nanoseconds(Int64.max).nanoseconds == .max, "the highest that fits")
        #expect(Duration(attoseconds: Int128(UInt64.max) * 1_000_000_000_000).nanoseconds == .max, "beyond 584 years")
    }
}
