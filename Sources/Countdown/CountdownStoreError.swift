/// Why a ``CountdownStore`` could not be read, written or restored from. When one is thrown,
/// nothing changed: no countdown was restored, and the store's file was neither written nor
/// removed.
public enum CountdownStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file exists but could not be read (permissions, a directory in its place).
    case unreadable(path: String, reason: String)
    /// The file is not a countdown store, or its contents do not hold together.
    case corrupt(path: String, reason: String)
    /// The file ends before the length its header declares (nil: before the header ends): a
    /// write cut short by something other than this package, which replaces the file only once
    /// a new one is complete.
    case truncated(path: String, expectedBytes: Int?, foundBytes: Int)
    /// The file was written by a newer version of this package, in a format this one cannot read.
    case newerVersion(path: String, found: Int, supported: Int)
    /// Writing the file failed (a full disk, a read-only directory); the previous file stays.
    case writeFailed(path: String, reason: String)
    /// The store already serves a scheduler, or the scheduler already has a store: one store
    /// per scheduler, one scheduler per store.
    case alreadyAttached(path: String)
    /// A stored countdown the scheduler refuses (a remaining time above its maximum duration,
    /// more countdowns than its capacity, a scheduler shut down); none was restored.
    case refused(key: String, CountdownError)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read the countdown store \(path): \(reason)"
        case .corrupt(let path, let reason): "\(path) is not a readable countdown store: \(reason)"
        case .truncated(let path, let expected?, let found):
            "the countdown store \(path) is truncated: \(found) of \(expected) bytes"
        case .truncated(let path, nil, let found):
            "the countdown store \(path) is truncated: \(found) bytes, its header cut short"
        case .newerVersion(let path, let found, let supported):
            "the countdown store \(path) has format version \(found); this version reads up to \(supported)"
        case .writeFailed(let path, let reason): "could not write the countdown store \(path): \(reason)"
        case .alreadyAttached(let path): "the countdown store \(path) or the scheduler is already attached"
        case .refused(let key, let error): "the stored countdown \"\(key)\" was refused: \(error)"
        }
    }
}
