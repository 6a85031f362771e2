import Countdown
import Foundation

/// A built-in backend that keeps its countdowns in a `CountdownStore`, as an app that survives
/// being killed does: restored at once from an empty store in a folder of its own, so every
/// start, cancel and finish writes the file. What it costs is the difference from the same
/// backend without a store. The folder goes with the scheduler.
final class StoredScheduler: ForwardingScheduler, @unchecked Sendable {
    private let folder: String
    private let declared: CountdownProfile

    init(_ inner: KeyedCountdownScheduler) {
        folder = NSTemporaryDirectory() + "countdown-bench-store-\(UUID().uuidString)"
        declared = Self.profile(inner.profile)
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try inner.restore(from: CountdownStore(path: folder + "/countdowns.store"))
        } catch {
            inner.shutdown()
            try? FileManager.default.removeItem(atPath: folder)
            // A store that cannot be made in a fresh temporary folder is a broken machine, not
            // bad input.
            fatalError("countdown-bench: cannot make a store in \(folder): \(error)")
        }
        super.init(inner)
    }

    /// `store`, after the inner backend's own variant: `continuous+store`.
    static let variantSuffix = "store"

    /// The inner backend's profile, its variant saying that it keeps a store.
    static func profile(_ inner: CountdownProfile) -> CountdownProfile {
        var profile = inner
        profile.variant = CountdownBackend.variant(inner.variant, plus: variantSuffix)
        return profile
    }

    override var profile: CountdownProfile { declared }

    override func shutdown() {
        super.shutdown()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Released without a shutdown: the folder goes all the same (the inner scheduler, released
    /// after this, writes nowhere then).
    deinit { try? FileManager.default.removeItem(atPath: folder) }
}
