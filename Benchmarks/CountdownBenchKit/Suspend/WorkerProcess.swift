import CountdownSupport
import Dispatch
import Foundation

/// A `countdown-bench worker` child process: started from this executable, its lines read on a
/// thread of their own and timestamped, its stdin writable, and SIGSTOP / SIGCONT sent to it.
final class WorkerProcess: Sendable {
    struct Line: Sendable {
        /// nil for a line no worker writes.
        let message: WorkerMessage?
        /// When the parent read it (CLOCK_MONOTONIC ns).
        let received: UInt64
    }

    private let process: Process
    private let input: FileHandle
    private let lines = Locked([Line]())
    private let ended = DispatchSemaphore(value: 0)

    /// This executable: the worker is the same binary, so it is always the same build.
    static var executable: URL {
        #if os(Linux)
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path)
        }
        #endif
        return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    }

    init(arguments: [String], executable: URL = WorkerProcess.executable, environment: [String: String] = [:]) throws {
        // A worker that already ended has closed its stdin: writing to it must fail, not kill us.
        signal(SIGPIPE, SIG_IGN)
        process = Process()
        process.executableURL = executable
        process.arguments = ["worker"] + arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let stdout = Pipe(), stdin = Pipe()
        process.standardOutput = stdout
        process.standardInput = stdin
        input = stdin.fileHandleForWriting
        try process.run()
        let output = stdout.fileHandleForReading
        let reader = Thread { [lines, ended] in
            nameCurrentThread("bench-worker-io")
            var pending = Data()
            while true {
                let chunk = output.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                let now = SystemClocks.monotonic()
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let text = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    lines.withLock { $0.append(Line(message: WorkerMessage(line: text), received: now)) }
                }
            }
            ended.signal()
        }
        reader.start()
    }

    var pid: Int32 { process.processIdentifier }

    func send(_ instruction: WorkerInstruction) {
        try? input.write(contentsOf: Data((instruction.rawValue + "\n").utf8))
    }

    /// Sends `instruction` and waits until the worker answers with one more message of kind
    /// `answer`. False at the limit, or when the worker is done first (its countdowns all
    /// finished: it reads no more instructions).
    func request(_ instruction: WorkerInstruction, answer: WorkerMessage.Kind, within limit: Duration = .seconds(5)) -> Bool {
        let before = count(answer)
        send(instruction)
        return poll(within: limit) { count(answer) > before ? true : count(.done) > 0 ? false : nil }
    }

    /// For an error message: whether the process still runs, and its last lines.
    var state: String {
        let last = lines.withLock { $0.suffix(6).map { $0.message?.line ?? "?" } }
        return (process.isRunning ? "still running" : "exited (\(process.terminationStatus))")
            + "; its last lines: " + (last.isEmpty ? "none" : last.joined(separator: " | "))
    }

    func stop() { kill(pid, SIGSTOP) }
    func `continue`() { kill(pid, SIGCONT) }

    /// SIGKILL, as iOS ends a suspended app: nothing in the worker runs after it. Returns once
    /// the process is gone; its lines already written are still read to the end.
    func killNow() {
        kill(pid, SIGKILL)
        process.waitUntilExit()
    }

    /// How many messages of `kind` have arrived.
    func count(_ kind: WorkerMessage.Kind) -> Int {
        lines.withLock { $0.filter { $0.message?.kind == kind }.count }
    }

    var received: [Line] { lines.withLock { $0 } }

    /// Waits until a message of `kind` arrives (or `count` of them); false at the limit.
    func waitFor(_ kind: WorkerMessage.Kind, count: Int = 1, within limit: Duration) -> Bool {
        poll(within: limit) { self.count(kind) >= count ? true : nil }
    }

    /// Asks `decide` every 2 ms until it answers; false when it has not by the limit.
    private func poll(within limit: Duration, _ decide: () -> Bool?) -> Bool {
        let deadline = SystemClocks.monotonic() + UInt64(limit.nanoseconds)
        while SystemClocks.monotonic() < deadline {
            if let answer = decide() { return answer }
            SystemClocks.sleep(untilMonotonic: SystemClocks.monotonic() + 2_000_000)
        }
        return false
    }

    /// Ends the worker (continuing it first, if it was stopped) and waits for its output to end.
    func end() {
        kill(pid, SIGCONT)
        send(.quit)
        if ended.wait(timeout: .now() + .seconds(5)) == .timedOut {
            process.terminate()
            // A worker wedged where it cannot take SIGTERM (seen: libfaketime's start-up inside
            // a ThreadSanitizer build) must still end, or so would we.
            if ended.wait(timeout: .now() + .seconds(2)) == .timedOut { kill(pid, SIGKILL) }
        }
        process.waitUntilExit()
    }
}
