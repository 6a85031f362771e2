#if Redis
/// The instants a countdown ticks at: where the remaining time is duration − k·tick, k ≥ 1,
/// before the deadline. Computed from the shared deadline, so every member that observes the
/// countdown in turn ticks on the same grid.
enum TickGrid {
    /// The first tick instant after `now`, nil when no tick is left before `deadline`.
    static func next(deadline: Int64, duration: Int64, tick: Int64, after now: Int64) -> Int64? {
        let origin = deadline - duration
        let elapsed = max(0, now - origin)
        let k = elapsed / tick + 1
        let (offset, overflow) = k.multipliedReportingOverflow(by: tick)
        guard !overflow else { return nil }
        let (instant, overflowed) = origin.addingReportingOverflow(offset)
        guard !overflowed, instant < deadline else { return nil }
        return instant
    }
}
#endif
