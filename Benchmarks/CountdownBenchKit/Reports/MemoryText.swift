/// A ``MemoryLatency`` in words, for the run's reports, compare's note and the guide: every
/// figure in ns, every working set in MiB, written here once.
enum MemoryText {
    /// "4 MiB 158 ns (20.9–169), 64 MiB 210 ns (181–211)": each set's median over the repeats,
    /// and their range when they differ.
    static func perRepeat(_ memory: MemoryLatency) -> String? {
        guard let small = memory.smallSet, let large = memory.largeSet else { return nil }
        func set(_ bytes: Int, _ spread: Spread) -> String {
            let range = spread.min == spread.max ? "" : " (\(ReportFormat.significant(spread.min))–\(ReportFormat.significant(spread.max)))"
            return "\(size(bytes)) \(ns(spread.median))\(range)"
        }
        return "\(set(memory.smallSetBytes, small)), \(set(memory.largeSetBytes, large))"
    }

    /// The medians of two runs side by side.
    static func compared(old: MemoryLatency, new: MemoryLatency) -> String? {
        guard let oldSmall = old.smallSet, let oldLarge = old.largeSet, let newSmall = new.smallSet, let newLarge = new.largeSet else {
            return nil
        }
        return "\(ns(oldSmall.median)) (\(size(old.smallSetBytes))) and \(ns(oldLarge.median)) (\(size(old.largeSetBytes))) in OLD, "
            + "\(ns(newSmall.median)) and \(ns(newLarge.median)) in NEW"
    }

    /// "20.9–181 ns in 4 MiB, 181–302 ns in 64 MiB": every repeat of several runs, lowest to highest.
    static func range(_ measured: [MemoryLatency]) -> String? {
        func range(_ values: [Double]) -> String? {
            guard let low = values.min(), let high = values.max() else { return nil }
            let (a, b) = (ReportFormat.significant(low), ReportFormat.significant(high))
            return (a == b ? a : "\(a)–\(b)") + " ns"
        }
        guard let first = measured.first, let small = range(measured.flatMap(\.smallSetNs)),
              let large = range(measured.flatMap(\.largeSetNs)) else { return nil }
        return "\(small) in \(size(first.smallSetBytes)), \(large) in \(size(first.largeSetBytes))"
    }

    private static func ns(_ value: Double) -> String { ReportFormat.significant(value) + " ns" }
    private static func size(_ bytes: Int) -> String { "\(bytes >> 20) MiB" }
}
