import CountdownSupport

extension Duration {
    /// A short human reading: "1.5 s", "250 ms", "40 µs".
    var countdownText: String {
        let s = seconds
        let magnitude = Swift.abs(s)
        if magnitude >= 1 || magnitude == 0 { return "\(trimmed(s)) s" }
        if magnitude >= 1e-3 { return "\(trimmed(s * 1e3)) ms" }
        if magnitude >= 1e-6 { return "\(trimmed(s * 1e6)) µs" }
        return "\(trimmed(s * 1e9)) ns"
    }
}

/// Three significant decimals at most, no trailing zeros: 1.5, 0.333, 120.
private func trimmed(_ value: Double) -> String {
    let rounded = (value * 1000).rounded() / 1000
    if rounded == rounded.rounded() && Swift.abs(rounded) < 1e15 {
        return String(Int64(rounded))
    }
    return String(rounded)
}
