import Countdown
import Foundation

/// What the store checks share: a folder of the check's own for store files, and the check's
/// scheduler as one that keeps a ``CountdownStore`` (a ``KeyedCountdownScheduler``), on the
/// check's time. A store check of a backend that keeps none, or whose factory already gave it
/// one, is not applicable.
struct StoreFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("countdown-store-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// The file's bytes now; nil when there is no file (an empty store).
    func bytes(_ name: String) -> Data? { FileManager.default.contents(atPath: path(name)) }

    /// Writes `data` as `name`; with nil, makes sure there is no such file.
    func put(_ data: Data?, as name: String) throws {
        if let data { try data.write(to: URL(fileURLWithPath: path(name))) } else { try? FileManager.default.removeItem(atPath: path(name)) }
    }

    func remove() { try? FileManager.default.removeItem(at: url) }

    /// A fresh scheduler of the check's, as one that keeps a store, restored from `path` (a
    /// launch): in virtual time, with its clock first moved to `at`, the instant the previous
    /// launch's clock read when it ended (a relaunch happens later than the run before it, on
    /// one timeline). Nil, with the check marked not applicable, when it keeps no store or
    /// already keeps one.
    static func restored(_ c: CheckContext, tick: Duration, from path: String, at instant: UInt64? = nil) throws
        -> (Harness, any KeyedCountdownScheduler, CountdownRestoration)?
    {
        let h = try c.makeScheduler(tick: tick)
        guard let keyed = h.scheduler as? any KeyedCountdownScheduler else {
            c.notApplicable("the backend keeps no CountdownStore (it is not a KeyedCountdownScheduler)")
            return nil
        }
        if let instant, h.time.mode == .virtual, instant > h.now() { h.settle(.nanoseconds(Int64(instant - h.now()))) }
        do {
            return (h, keyed, try keyed.restore(from: store(path, for: h)))
        } catch .alreadyAttached {
            c.notApplicable("the backend's scheduler already keeps a store (its factory restored one)")
            return nil
        }
    }

    /// The store at `path` for `h`'s scheduler. In real time, the system's clocks. In virtual
    /// time, clocks that read the scheduler's own (one boot, which never ends), so that its
    /// deadlines are kept on the time the check drives: a relaunch made at the instant the
    /// previous run ended (``restored(_:tick:from:at:)``) finds them where they were. Only
    /// differences count, so the wall clock is an arbitrary date plus that time.
    static func store(_ path: String, for h: Harness) -> CountdownStore {
        CountdownStore(path: path, clocks: clocks(for: h))
    }

    /// The clocks a store of `h`'s scheduler keeps its deadlines on (``store(_:for:)``).
    static func clocks(for h: Harness) -> StoreClocks {
        guard h.time.mode == .virtual else { return .system }
        // The check's time, not the harness: the store lives in the scheduler, which must not
        // hold its harness (the time holds the scheduler weakly).
        let time = h.time
        let epoch: Int64 = 1_767_225_600 * 1_000_000_000  // 2026-01-01
        return StoreClocks(wall: { epoch &+ Int64(time.now()) }, boot: { Int64(time.now()) }, bootID: "virtual")
    }

    /// The deadline the file `name` records for the running countdown `key`, on `h`'s clock
    /// (the check's): nil when the file does not hold it running. The store keeps deadlines on
    /// the boot clock (``StoreFolder/store(_:for:)``'s, the check's own time in virtual time).
    /// Two clocks are never read at one instant: the deadline is the range that the offset
    /// between them allows (``offset(boot:now:)``), each bound judged where it gives the backend
    /// the doubt. (Read back to back as one point, a check preempted between its two reads
    /// moved the deadline later by as long: CI, "the file's deadline is 307 µs later than the
    /// scheduler's own", a correct backend failed.)
    func deadline(of key: String, in name: String, on h: Harness) -> ClosedRange<UInt64>? {
        guard let data = bytes(name),
              let record = try? StoreFile.decode(data, path: path(name)).first(where: { $0.key == key }),
              case let .running(_, bootDeadline, _) = record.state
        else { return nil }
        let clocks = Self.clocks(for: h)
        let offset = Self.offset(boot: clocks.boot, now: { Int64(h.now()) })
        // deadline = bootDeadline - offset: the larger offset gives the earlier deadline.
        return UInt64(max(bootDeadline - offset.upperBound, 0))...UInt64(max(bootDeadline - offset.lowerBound, 0))
    }

    /// The boot clock's reading less the check's, at one instant: within the range that a read
    /// of the check's clock before and after the boot clock's allows, the narrowest of `tries`.
    static func offset(boot: () -> Int64, now: () -> Int64, tries: Int = 5) -> ClosedRange<Int64> {
        var best: ClosedRange<Int64>?
        for _ in 0..<max(tries, 1) {
            let before = now(), read = boot(), after = now()
            let range = (read - after)...(read - before)
            if best.map({ range.upperBound - range.lowerBound < $0.upperBound - $0.lowerBound }) ?? true { best = range }
        }
        return best!
    }

    /// Every key a restoration names, with how often (a key named twice is a defect too).
    static func mentions(_ key: String, in r: CountdownRestoration) -> [String] {
        (r.running[key] != nil ? ["running"] : []) + (r.paused[key] != nil ? ["paused"] : [])
            + r.expired.filter { $0 == key }.map { _ in "expired" } + r.kept.filter { $0 == key }.map { _ in "kept" }
    }
}
