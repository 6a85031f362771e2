import CountdownSupport
import Foundation

/// libfaketime (Debian's `faketime` package), preloaded into a worker process: its wall clock
/// (CLOCK_REALTIME) is offset by what a file says, re-read on every call, while the monotonic
/// clocks stay real. The machine's clock is never touched.
///
/// libfaketime also rewrites every absolute `timerfd_settime` deadline as if it were on the wall
/// clock, CLOCK_MONOTONIC ones included: with an offset of +S seconds, a deadline at M seconds
/// since boot is armed at M − S (seen with strace: 678 s − 3 600 s armed as −2 922 s). Where
/// M − S is negative the kernel refuses it (EINVAL): CFRunLoop then never arms its timer again
/// and the run-loop backend's countdowns stop, while libdispatch retries at once and keeps
/// firing on time by spinning. So the offset stays below the time since boot (``jump()``): its
/// deadlines are then in the past, every timer is re-armed at once until it is really due, and
/// each fires on time. A negative offset moves them later instead, and holds back libdispatch's
/// and CFRunLoop's monotonic timers: the clock is only ever set forward.
///
/// The library is libfaketime's multithreaded build, `libfaketimeMT`, which serialises its
/// clock calls. The plain build re-reads the offset file into one static buffer on every call
/// and parses it in place, so a thread reading the clock while another refills the buffer sees
/// the real time: 3 806 of 1.03 million reads in three threads did (libfaketime 0.9.10, which
/// Debian ships), none of 2.5 million with the multithreaded build. Those timers armed in the
/// past keep the loops spinning on the clock, so a misread is likely: one armed the run-loop
/// backend's restored timer an hour early, it fired at once, and the countdown counted a tick
/// too many and finished 194 ms early.
enum FakeTime {
    static let candidates = [
        "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1",
        "/usr/lib/aarch64-linux-gnu/faketime/libfaketimeMT.so.1",
        "/usr/lib/faketime/libfaketimeMT.so.1",
        "/usr/local/lib/faketime/libfaketimeMT.so.1",
    ]

    /// The library, or nil when it is not installed.
    static var library: String? { candidates.first { FileManager.default.fileExists(atPath: $0) } }

    static let missing = "libfaketime's multithreaded build (libfaketimeMT) is not installed (apt-get install faketime): the wall-clock jumps cannot be made"

    /// How far forward the worker's wall clock is set: an hour, or less on a machine up for
    /// less than an hour and two minutes (whole minutes, two short of the time since boot; see
    /// the type's comment). Nil when the machine has been up for less than three minutes.
    static func jump(upFor uptime: Duration = .nanoseconds(Int64(SystemClocks.monotonic()))) -> Duration? {
        let minutes = min(60, Int64(uptime.seconds / 60) - 2)
        return minutes >= 1 ? .seconds(minutes * 60) : nil
    }

    static let tooSoonAfterBoot = "the machine has been up for less than three minutes: libfaketime would arm its monotonic timers before the boot"

    /// "+1 h", "+17 min".
    static func text(_ jump: Duration) -> String {
        let minutes = Int64(jump.seconds / 60)
        return minutes % 60 == 0 ? "+\(minutes / 60) h" : "+\(minutes) min"
    }

    /// A file holding the offset, and the environment that makes a child process read it.
    final class Offset: Sendable {
        let path: String
        let environment: [String: String]

        init?() {
            guard let library = FakeTime.library else { return nil }
            path = NSTemporaryDirectory() + "countdown-faketime-\(UUID().uuidString)"
            environment = [
                "LD_PRELOAD": library, "FAKETIME_TIMESTAMP_FILE": path, "FAKETIME_NO_CACHE": "1",
                "FAKETIME_DONT_FAKE_MONOTONIC": "1",
            ]
            set(seconds: 0)
        }

        /// From now on the child's wall clock reads `seconds` off the real one.
        func set(seconds: Double) {
            let text = (seconds >= 0 ? "+" : "") + String(format: "%.0f", seconds) + "\n"
            try? text.write(toFile: path, atomically: true, encoding: .utf8)
        }

        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }
}
