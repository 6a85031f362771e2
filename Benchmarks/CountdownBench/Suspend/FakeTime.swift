import Foundation

/// libfaketime (Debian's `faketime` package), preloaded into a worker process: its wall clock
/// (CLOCK_REALTIME) is offset by what a file says, re-read on every call, while the monotonic
/// clocks stay real. The machine's clock is never touched.
enum FakeTime {
    static let candidates = [
        "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
        "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
        "/usr/lib/faketime/libfaketime.so.1",
        "/usr/local/lib/faketime/libfaketime.so.1",
    ]

    /// The library, or nil when it is not installed.
    static var library: String? { candidates.first { FileManager.default.fileExists(atPath: $0) } }

    static let missing = "libfaketime is not installed (apt-get install faketime): the wall-clock jumps cannot be made"

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
