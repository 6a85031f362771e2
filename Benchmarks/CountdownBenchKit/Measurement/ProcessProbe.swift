import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the process has used so far, from `getrusage(RUSAGE_SELF)` (every thread of it).
struct ProcessUsage {
    /// User + system CPU time.
    let cpuNanoseconds: UInt64
    let contextSwitches: Int
    /// The times a thread of the process gave up the CPU to wait: its wake-ups.
    let voluntarySwitches: Int

    static func now() -> ProcessUsage {
        var usage = rusage()
        #if os(Linux)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func nanos(_ time: timeval) -> UInt64 { UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_usec) * 1000 }
        return ProcessUsage(
            cpuNanoseconds: nanos(usage.ru_utime) + nanos(usage.ru_stime),
            contextSwitches: Int(usage.ru_nvcsw) + Int(usage.ru_nivcsw),
            voluntarySwitches: Int(usage.ru_nvcsw))
    }

    /// The calling thread's voluntary switches: how often it waited (0 where it cannot be read).
    static func threadVoluntarySwitches() -> Int {
        #if os(Linux)
        var usage = rusage()
        getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD
        return Int(usage.ru_nvcsw)
        #else
        return 0
        #endif
    }
}

/// Threads and resident memory, read from /proc/self/status with plain `read(2)` into a stack
/// buffer: no allocation, a few microseconds, so it can be sampled while countdowns run.
struct ProcessStatus {
    let threads: Int
    let residentBytes: Int

    /// nil where /proc is missing (not Linux).
    static func now() -> ProcessStatus? {
        #if os(Linux)
        let fd = open("/proc/self/status", O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4096) { buffer -> ProcessStatus? in
            var length = 0
            while length < buffer.count {
                let n = read(fd, buffer.baseAddress! + length, buffer.count - length)
                if n <= 0 { break }
                length += n
            }
            let text = UnsafeBufferPointer(rebasing: buffer[..<length])
            guard let threads = field("Threads:", in: text), let rssKiB = field("VmRSS:", in: text) else { return nil }
            return ProcessStatus(threads: threads, residentBytes: rssKiB * 1024)
        }
        #else
        return nil
        #endif
    }

    /// The number after `name` at the start of a line.
    private static func field(_ name: StaticString, in text: UnsafeBufferPointer<UInt8>) -> Int? {
        let key = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        var lineStart = 0
        while lineStart < text.count {
            var lineEnd = lineStart
            while lineEnd < text.count && text[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            if lineEnd - lineStart > key.count && text[lineStart..<lineStart + key.count].elementsEqual(key) {
                var value = 0, index = lineStart + key.count, digits = 0
                while index < lineEnd {
                    let byte = text[index]
                    if byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") {
                        value = value * 10 + Int(byte - UInt8(ascii: "0"))
                        digits += 1
                    } else if digits > 0 {
                        break
                    }
                    index += 1
                }
                return digits > 0 ? value : nil
            }
            lineStart = lineEnd + 1
        }
        return nil
    }

    /// Hands freed heap back to the kernel, so that the next configuration's resident memory is
    /// measured from a baseline that is not inflated by the previous one's.
    static func releaseFreeMemory() {
        #if os(Linux)
        // glibc's malloc_trim is not in the Glibc module; found at run time instead.
        if let trim = mallocTrim { _ = trim(0) }
        #endif
    }

    #if os(Linux)
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = dlsym(nil, "malloc_trim")
        .map { unsafeBitCast($0, to: (@convention(c) (Int) -> Int32).self) }
    #endif
}

/// Each thread's CPU time so far (ns), from /proc/self/task/*/schedstat. Two snapshots tell
/// which threads ran in between: unlike a thread count, idle threads left in libdispatch's
/// pool by an earlier configuration do not count.
struct ThreadTimes {
    private(set) var runtimes: [Int: UInt64] = [:]

    static func now() -> ThreadTimes {
        var times = ThreadTimes()
        #if os(Linux)
        guard let tids = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return times }
        for tid in tids {
            guard let id = Int(tid),
                  let text = try? String(contentsOfFile: "/proc/self/task/\(tid)/schedstat", encoding: .utf8),
                  let first = text.split(separator: " ").first, let runtime = UInt64(first)
            else { continue }
            times.runtimes[id] = runtime
        }
        #endif
        return times
    }

    /// Threads that used at least `threshold` ns of CPU since `earlier` (new ones included).
    /// The threshold leaves out idle pool threads that only woke to time out and exit.
    func busy(since earlier: ThreadTimes, threshold: UInt64 = 100_000) -> Int {
        runtimes.reduce(0) { count, entry in
            let used = entry.value &- (earlier.runtimes[entry.key] ?? 0)
            return count + (entry.value >= (earlier.runtimes[entry.key] ?? 0) && used >= threshold ? 1 : 0)
        }
    }

    var isEmpty: Bool { runtimes.isEmpty }
}
