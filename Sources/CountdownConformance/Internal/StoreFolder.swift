import Countdown
import Foundation

/// What the store checks share: a folder of the check's own for store files, and the check's
/// scheduler as one that keeps a ``CountdownStore`` (a ``KeyedCountdownScheduler``). A store
/// check of a backend that keeps none, or whose factory already gave it one, is not applicable.
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

    /// A fresh scheduler of the check's, as one that keeps a store, restored from `path`; nil,
    /// with the check marked not applicable, when it keeps none or already keeps one.
    static func restored(_ c: CheckContext, tick: Duration, from path: String) throws
        -> (Harness, any KeyedCountdownScheduler, CountdownRestoration)?
    {
        let h = try c.makeScheduler(tick: tick)
        guard let keyed = h.scheduler as? any KeyedCountdownScheduler else {
            c.notApplicable("the backend keeps no CountdownStore (it is not a KeyedCountdownScheduler)")
            return nil
        }
        do {
            return (h, keyed, try keyed.restore(from: CountdownStore(path: path)))
        } catch .alreadyAttached {
            c.notApplicable("the backend's scheduler already keeps a store (its factory restored one)")
            return nil
        }
    }

    /// Every key a restoration names, with how often (a key named twice is a defect too).
    static func mentions(_ key: String, in r: CountdownRestoration) -> [String] {
        (r.running[key] != nil ? ["running"] : []) + (r.paused[key] != nil ? ["paused"] : [])
            + r.expired.filter { $0 == key }.map { _ in "expired" } + r.kept.filter { $0 == key }.map { _ in "kept" }
    }
}
