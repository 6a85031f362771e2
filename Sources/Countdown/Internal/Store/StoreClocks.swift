import CountdownSupport
import Foundation
#if canImport(Darwin)
import Darwin
#endif

/// What a ``CountdownStore`` reads to place a deadline: the wall clock, the boot clock
/// (`CLOCK_BOOTTIME`: monotonic, counting through the machine's sleep, reset by a reboot) and
/// the identity of the current boot. Replaceable within the package, so that tests and the
/// benchmark can play a reboot or a clock change without touching the machine.
package struct StoreClocks: Sendable {
    /// Nanoseconds since 1970 (`CLOCK_REALTIME`).
    package var wall: @Sendable () -> Int64
    /// Nanoseconds since boot (`CLOCK_BOOTTIME`).
    package var boot: @Sendable () -> Int64
    /// The current boot's identity, or nil when it cannot be read (then the wall clock decides).
    package var bootID: String?

    package init(wall: @escaping @Sendable () -> Int64, boot: @escaping @Sendable () -> Int64, bootID: String?) {
        self.wall = wall
        self.boot = boot
        self.bootID = bootID
    }

    package static let system = StoreClocks(
        wall: { SystemClocks.wall() }, boot: { SystemClocks.continuous() }, bootID: currentBootID())

    /// Linux: the kernel's random id of this boot. Apple platforms: the boot time, `kern.boottime`
    /// (which the kernel moves when the clock is set: a changed clock then reads as a reboot, and
    /// the wall clock decides).
    static func currentBootID() -> String? {
        #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else { return nil }
        let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return id.isEmpty ? nil : id
        #elseif canImport(Darwin)
        var time = timeval()
        var size = MemoryLayout<timeval>.size
        guard sysctlbyname("kern.boottime", &time, &size, nil, 0) == 0 else { return nil }
        return "boottime-\(time.tv_sec).\(time.tv_usec)"
        #else
        return nil
        #endif
    }
}

/// What the benchmark's worker hooks into a store's writes: a pause in the middle of one, to
/// kill the process there, and each write's length, to report what persistence costs.
package struct StoreHooks: Sendable {
    /// Called when half of the new file has been written, before the rest and the rename.
    package var midWrite: (@Sendable () -> Void)?
    /// Called after each write (successful or not) with how long it took, `midWrite` left out.
    package var wrote: (@Sendable (Duration) -> Void)?

    /// Broken promises on purpose, for the conformance suite's own tests (``StoreDefects``).
    package var defects: StoreDefects

    package init(midWrite: (@Sendable () -> Void)? = nil, wrote: (@Sendable (Duration) -> Void)? = nil, defects: StoreDefects = []) {
        self.midWrite = midWrite
        self.wrote = wrote
        self.defects = defects
    }
}
