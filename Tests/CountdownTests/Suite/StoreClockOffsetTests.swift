@testable import CountdownConformance
import Testing

/// `store.restore` maps the file's boot-clock deadline onto the check's clock. Read back to
/// back as one point, a check preempted between its two reads moved the deadline later by as
/// long, and failed a correct backend (CI: "the file's deadline is 307 µs later than the
/// scheduler's own once written"). The offset is a range, read before and after.
struct StoreClockOffsetTests {
    /// A boot clock 1 000 ns ahead of the check's, read at the instants `readings` name: each
    /// try reads the check's clock, the boot clock, the check's clock.
    static func offset(_ readings: [(before: Int64, boot: Int64, after: Int64)]) -> ClosedRange<Int64> {
        var check: [Int64] = readings.flatMap { [$0.before, $0.after] }
        var boot: [Int64] = readings.map { $0.boot + 1_000 }
        return StoreFolder.offset(boot: { boot.removeFirst() }, now: { check.removeFirst() }, tries: readings.count)
    }

    @Test("the offset between the boot clock and the check's holds the true one, however long a read was preempted, and is the narrowest read")
    func bracketHoldsTheTruth() {
        // Preempted 500 ns after the boot clock was read, then a prompt try.
        let range = Self.offset([(100, 100, 600), (700, 702, 703)])
        #expect(range.contains(1_000))
        #expect(range == 999...1_002, "not the narrowest try: \(range)")
        // Preempted before the boot read alone: still held, the range as wide as the preemption.
        let alone = Self.offset([(0, 400, 401)])
        #expect(alone.contains(1_000) && alone == 999...1_400)
    }
}
