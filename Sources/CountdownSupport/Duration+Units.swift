extension Duration {
    /// Seconds as a `Double`, for arithmetic that tolerates rounding (display, ratios).
    @inlinable
    public var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) * 1e-18
    }

    /// Whole nanoseconds, saturating; the resolution every clock of the package works in.
    @inlinable
    public var nanoseconds: Int64 {
        let (s, attoseconds) = components
        let (product, overflow) = s.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return s < 0 ? .min : .max }
        let (sum, sumOverflow) = product.addingReportingOverflow(attoseconds / 1_000_000_000)
        return sumOverflow ? (s < 0 ? .min : .max) : sum
    }
}
