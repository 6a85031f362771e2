/// Defects a store can be made with on purpose, each one a broken promise of
/// ``CountdownStore`` that the conformance suite's store checks must reject: this package's own
/// tests build broken backends from them (``StoreHooks/defects``). Empty in every store a user
/// makes.
package struct StoreDefects: OptionSet, Sendable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }

    /// A finish is delivered without waiting for the write that removes its countdown: a
    /// process killed in the observer's call comes back with the countdown and finishes it again.
    package static let finishesBeforeWrite = StoreDefects(rawValue: 1 << 0)
    /// `waitUntilStored()` (and the restore's own wait) returns without waiting for the write.
    package static let waitReturnsEarly = StoreDefects(rawValue: 1 << 1)
    /// Paused countdowns are left out of every write: a relaunch forgets them.
    package static let forgetsPaused = StoreDefects(rawValue: 1 << 2)
    /// Every write keeps the countdowns the restore read, expired ones too: the next launch
    /// reports them expired again.
    package static let keepsWhatItRead = StoreDefects(rawValue: 1 << 3)
    /// A file that is not a store, or is from a newer version, is read as an empty store: the
    /// restore's write replaces it.
    package static let readsBadFilesAsEmpty = StoreDefects(rawValue: 1 << 4)
}
