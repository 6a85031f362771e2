/// A table's tick, with its length in nanoseconds converted once: a conversion is an `Int128`
/// division, and every start makes a progress from it.
struct TickLength: Sendable {
    let duration: Duration
    let nanoseconds: Int64

    init(_ duration: Duration) {
        self.duration = duration
        nanoseconds = duration.nanoseconds
    }
}
