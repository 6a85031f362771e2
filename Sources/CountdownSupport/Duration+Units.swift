extension Duration {
    /// Seconds as a `Double`, for arithmetic that tolerates rounding (display, ratios).
    @inlinable
    public var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) * 1e-18
    }

    /// Whole nanoseconds, truncated toward zero and saturating; the resolution every clock of
    /// the package works in. One division of the attoseconds, not `components` (a division and
    /// a remainder by 10¹⁸, then a multiplication back): 5 ns against 15, and a start converts
    /// two durations.
    @inlinable
    public var nanoseconds: Int64 {
        Int64(clamping: attoseconds / 1_000_000_000)
    }
}
