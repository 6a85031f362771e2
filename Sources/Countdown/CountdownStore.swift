import CountdownSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file that keeps a scheduler's countdowns across launches: the "Retry in 42 s" button
/// still counts down after the system killed the suspended app and the user opened it again.
///
/// ```swift
/// let store = CountdownStore(path: applicationSupport + "/countdowns.store")
/// let restoration = try scheduler.restore(from: store)   // at launch, before any start
/// ```
///
/// After ``KeyedCountdownScheduler/restore(from:)`` the scheduler writes the file at every
/// change of its countdowns (a start, a finish, a cancel, a pause, a resume), in the background:
/// the call returns at once, without waiting for the disk, and one write carries every change
/// made before it began. ``CountdownScheduler/enteredBackground()`` returns once the file holds
/// every change, so an app suspended and then killed comes back with what it had. Not at every
/// tick: a record keeps a deadline, not a remaining time.
///
/// **Which clock decides.** Each running countdown is kept as its deadline on two clocks: the
/// wall clock, and the boot clock (`CLOCK_BOOTTIME`, which counts through the device's sleep
/// and which nobody can set), with the identity of the boot it was read in
/// (`/proc/sys/kernel/random/boot_id` on Linux, `kern.boottime` on Apple platforms). Restored
/// in the same boot, the boot clock decides, so changing the clock while the app was not
/// running moves nothing. After a reboot the boot clock started again, and the wall clock
/// decides. A paused countdown is kept as its frozen remaining time.
///
/// **Writes** replace the file whole: a new file is written beside it and renamed over it, so
/// the file is always a complete version, even when the process is killed during a write (a
/// leftover temporary file of a dead process is removed at the next restore). The file is not
/// flushed to the disk (`fsync`): a killed process loses nothing, a power cut may lose the
/// last change. Each write replaces the whole file, a cost in the number of countdowns that
/// grouping the changes into one write bounds but does not remove: made for the countdowns of
/// an app (thousands), not for a server's million.
///
/// **Bad files.** A missing file is an empty store. A file that cannot be read, is not a store,
/// is truncated, or comes from a newer version of this package throws a
/// ``CountdownStoreError`` and is left as it is: never written over, never removed. The store
/// then stays detached, so nothing writes to that path until a restore succeeds.
///
/// **Delivery.** A finish is delivered once the file no longer holds its countdown: it waits
/// for that write (with the events decided after it, in order) without blocking the delivery
/// queue. A process killed between that write and the observer's call loses the finish (the
/// countdown is gone, and the key free): at most once, never twice. A process killed before a
/// change was written (within a write's time of the call) comes back without that change.
public final class CountdownStore: Sendable {
    /// The file's path.
    public let path: String
    /// The clocks it places deadlines on (the system's, or a test's).
    package let clocks: StoreClocks
    private let hooks: StoreHooks?
    private let state = Locked(State())

    private struct State {
        var isAttached = false
        var lastWriteError: CountdownStoreError?
        /// What the restore read: kept only for ``StoreDefects/keepsWhatItRead``.
        var read: [CountdownRecord] = []
    }

    /// The defects this store was made with on purpose (none in a user's).
    var defects: StoreDefects { hooks?.defects ?? [] }

    /// A store kept in the file at `path`. Nothing is read or written until a scheduler
    /// restores from it.
    public convenience init(path: String) {
        self.init(path: path, clocks: .system)
    }

    /// A store that reads `clocks` instead of the system's, with `hooks` into its writes: for
    /// tests and the benchmark's kill experiment.
    package init(path: String, clocks: StoreClocks, hooks: StoreHooks? = nil) {
        self.path = path
        self.clocks = clocks
        self.hooks = hooks
    }

    /// Why the latest write failed, or nil when it succeeded (or none was made). A failed write
    /// leaves the previous file in place; the next change writes again.
    public var lastWriteError: CountdownStoreError? {
        state.withLock { $0.lastWriteError }
    }

    // MARK: - For the scheduler

    /// Marks the store as serving a scheduler.
    func claim() throws(CountdownStoreError) {
        try state.withLock { state throws(CountdownStoreError) in
            guard !state.isAttached else { throw .alreadyAttached(path: path) }
            state.isAttached = true
        }
    }

    /// Gives up a claim whose restore failed.
    func release() {
        state.withLock { $0.isAttached = false }
    }

    /// The countdowns in the file: none when it does not exist.
    func read() throws(CountdownStoreError) -> [CountdownRecord] {
        removeDeadWritersFiles()
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return [] }
            throw .unreadable(path: path, reason: Self.errorText())
        }
        defer { close(descriptor) }
        var file = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: Self.errorText())
            }
            if count == 0 { break }
            file.append(contentsOf: buffer[0..<count])
        }
        let records: [CountdownRecord]
        do throws(CountdownStoreError) {
            records = try StoreFile.decode(file, path: path)
        } catch {
            if defects.contains(.readsBadFilesAsEmpty) { return [] }
            throw error
        }
        if defects.contains(.keepsWhatItRead) { state.withLock { $0.read = records } }
        return records
    }

    /// Replaces the file with `records`, through a new file renamed over it. A failure is kept
    /// in ``lastWriteError`` and leaves the previous file.
    func write(_ records: [CountdownRecord]) {
        var records = records
        if defects.contains(.forgetsPaused) {
            records.removeAll { if case .paused = $0.state { true } else { false } }
        }
        if defects.contains(.keepsWhatItRead) {
            let keys = Set(records.map(\.key))
            records += state.withLock { $0.read }.filter { !keys.contains($0.key) }
        }
        let began = SystemClocks.monotonic()
        var paused: UInt64 = 0
        let error = replace(with: StoreFile.encode(records)) {
            guard let midWrite = hooks?.midWrite else { return }
            let pausedAt = SystemClocks.monotonic()
            midWrite()
            paused = SystemClocks.monotonic() - pausedAt
        }
        hooks?.wrote?(.nanoseconds(Int64(SystemClocks.monotonic() - began - paused)))
        state.withLock { $0.lastWriteError = error }
    }

    // MARK: - The file

    private var directory: String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private var name: String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }

    /// `.NAME.PID-RANDOM.tmp`, beside the file: a rename within one directory is atomic.
    private var temporaryPrefix: String { ".\(name)." }

    private func replace(with file: Data, midWrite: () -> Void) -> CountdownStoreError? {
        let temporary = "\(directory)/\(temporaryPrefix)\(getpid())-\(UInt64.random(in: 0...UInt64.max))" + ".tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return .writeFailed(path: path, reason: Self.errorText()) }
        let half = file.count / 2
        var written = writeAll(file[0..<half], to: descriptor)
        if written { midWrite() }
        written = written && writeAll(file[half...], to: descriptor)
        let closed = close(descriptor) == 0
        guard written, closed, rename(temporary, path) == 0 else {
            let reason = Self.errorText()
            unlink(temporary)
            return .writeFailed(path: path, reason: reason)
        }
        return nil
    }

    private func writeAll(_ bytes: Data, to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = systemWrite(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += count
            }
            return true
        }
    }

    /// Temporary files of writers that were killed mid-write: their process no longer exists.
    /// A live writer's file (another process writing the same store) is left alone.
    private func removeDeadWritersFiles() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for file in names where file.hasPrefix(temporaryPrefix) && file.hasSuffix(".tmp") {
            let tag = file.dropFirst(temporaryPrefix.count).prefix { $0 != "-" }
            guard let pid = Int32(tag), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink("\(directory)/\(file)") }
        }
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}

// The C library's read(2) and write(2), by other names: inside `CountdownStore` the plain
// names are its own methods'.
#if canImport(Glibc)
private let systemRead = Glibc.read
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
private let systemRead = Darwin.read
private let systemWrite = Darwin.write
#endif
