import Synchronization

#if os(Linux)
import Glibc
#endif

/// `Locked<Value>`, visible to ThreadSanitizer.
///
/// On Linux, `Synchronization.Mutex` is a PI futex: under contention the kernel hands the lock
/// to the waiting thread directly (FUTEX_LOCK_PI), so the waiter performs no atomic acquire that
/// ThreadSanitizer could see, and every access made under the lock after such a hand-over is
/// reported as a race (swiftlang/swift#88440 describes the hand-over). Telling ThreadSanitizer
/// about the lock keeps `--sanitize=thread` runs meaningful instead of suppressing our code.
/// Outside a sanitized process the annotations are absent and cost one predictable branch.
///
/// Public and inlinable, so that each caller gets a lock specialized to its state: a generic
/// call across the module boundary would look up generic metadata and box values on every
/// acquisition, and the package manager does not inline `package` declarations across
/// modules. (This target is no product: `public` reaches only the package's own targets.)
public final class Locked<Value: ~Copyable>: Sendable {
    @usableFromInline let mutex: Mutex<Value>
    /// Read once per lock: a lazily initialised global is a `swift_once` check on every read,
    /// two per acquisition, and a start's path on the recommended backend acquires locks four
    /// times: the engine's three (the start, the drain's first take, its last look, which finds
    /// nothing and ends it) and the ticker's once (the drain files the first fire).
    @usableFromInline let acquire: ThreadSanitizer.Annotation?
    @usableFromInline let release: ThreadSanitizer.Annotation?

    @inlinable
    public init(_ value: consuming sending Value) {
        mutex = Mutex(value)
        acquire = ThreadSanitizer.acquire
        release = ThreadSanitizer.release
    }

    @inlinable
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            let address = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
            acquire?(address)
            defer { release?(address) }
            return try body(&value)
        }
    }

    /// Runs `body` under the lock if it is free now; nil, without waiting, if another thread
    /// holds it. (The same body as `withLock`'s, written out: passed `&value` to a shared
    /// helper, the access to the value began before the helper told ThreadSanitizer of the
    /// acquisition, and `--sanitize=thread` reported every hand-over as a race.)
    @inlinable
    public func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        try mutex.withLockIfAvailable { (value: inout sending Value) throws(E) -> sending Result in
            let address = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
            acquire?(address)
            defer { release?(address) }
            return try body(&value)
        }
    }
}

/// ThreadSanitizer's annotation entry points, when its runtime is loaded (`--sanitize=thread`).
@usableFromInline package enum ThreadSanitizer {
    @usableFromInline package typealias Annotation = @convention(c) (UnsafeRawPointer?) -> Void

    @usableFromInline package static let acquire: Annotation? = lookUp("__tsan_acquire")
    @usableFromInline package static let release: Annotation? = lookUp("__tsan_release")

    private static func lookUp(_ symbol: String) -> Annotation? {
        #if os(Linux)
        // A nil handle is RTLD_DEFAULT: search the process's global symbols.
        guard let address = dlsym(nil, symbol) else { return nil }
        return unsafeBitCast(address, to: Annotation.self)
        #else
        // os_unfair_lock, under Mutex on Apple platforms, is understood by ThreadSanitizer.
        return nil
        #endif
    }
}
