import CountdownSupport
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The trial's side of one member process (``FleetMember``): starts it, sends it lines, reads
/// what it writes into the shared history, and stops or kills it by its process id.
final class FleetMemberProcess: Sendable {
    let index: Int
    private let process: ProcessBox
    private let input: FileHandle
    private let lines = Locked<[String]>([])
    private let untagged = Locked<[String]>([])
    private let history: Locked<FleetHistory>
    private let closed = DispatchSemaphore(value: 0)

    /// `@unchecked Sendable`: Foundation's `Process` is not annotated; it is made and started
    /// here, then only asked for its id and state, which it guards itself.
    private final class ProcessBox: @unchecked Sendable {
        let process: Process
        init(_ process: Process) { self.process = process }
    }

    init(
        index: Int, suite: String, relaunch: CountdownConformance.Relaunch, setup: String, history: Locked<FleetHistory>
    ) throws {
        self.index = index
        self.history = history
        let process = Process()
        process.executableURL = URL(fileURLWithPath: relaunch.executable)
        process.arguments = relaunch.arguments
        var environment = ProcessInfo.processInfo.environment.merging(relaunch.environment) { $1 }
        environment[CountdownConformance.fleetMemberVariable] = suite
        environment[FleetMember.setupVariable] = setup
        // A member of a member's trial would be another process again: never.
        environment.removeValue(forKey: CountdownConformance.suspensionWorkerVariable)
        process.environment = environment
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        input = stdin.fileHandleForWriting
        self.process = ProcessBox(process)
        try process.run()
        let reader = Thread { [self] in
            nameCurrentThread("conformance-fleet-read")
            var pending = Data()
            let handle = stdout.fileHandleForReading
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    read(line)
                }
            }
            closed.signal()
        }
        reader.start()
    }

    var processIdentifier: Int32 { process.process.processIdentifier }
    var isRunning: Bool { process.process.isRunning }

    /// The member's own lines (`ready`, `C 0`, …) but answers and events, which go to the history.
    var said: [String] { lines.withLock { $0 } }

    /// The last lines it printed that were not the member's: a test runner's, for a failure message.
    var otherOutput: String { untagged.withLock { $0.suffix(12).joined(separator: "\n") } }

    private func read(_ line: String) {
        guard line.hasPrefix(FleetMember.tag) else {
            untagged.withLock {
                $0.append(line)
                if $0.count > 64 { $0.removeFirst() }
            }
            return
        }
        let text = String(line.dropFirst(FleetMember.tag.count + 1))
        let fields = text.split(separator: " ").map(String.init)
        switch fields.first {
        case "R" where fields.count == 5:
            guard let id = Int(fields[1]), let invoked = UInt64(fields[2]), let returned = UInt64(fields[3]) else { return }
            let answer = FleetHistory.Call.Answer(text: fields[4])
            history.withLock {
                $0.calls[id]?.invoked = invoked
                $0.calls[id]?.returned = returned
                $0.calls[id]?.answer = answer
            }
        case "E" where fields.count == 5:
            guard let id = Int(fields[1]), let remaining = Int64(fields[3]), let at = UInt64(fields[4]) else { return }
            let event = FleetHistory.Event(observer: id, kind: fields[2] == "f" ? .finished : .tick, remaining: remaining, at: at)
            history.withLock { $0.events[id, default: []].append(event) }
        default:
            lines.withLock { $0.append(text) }
        }
    }

    func send(_ line: String) {
        // A member that is gone (killed, or it failed) leaves its pipe without a reader: EPIPE,
        // not SIGPIPE; what it did not answer stays unanswered.
        withoutSIGPIPE {
            do {
                try input.write(contentsOf: Data((line + "\n").utf8))
            } catch {}
        }
    }

    /// Waits until it has said a line beginning with `prefix`; the line, or nil.
    func wait(for prefix: String, after count: Int = 0, timeout: Duration) -> String? {
        var found: String?
        _ = realTimeWait(timeout: timeout) {
            found = lines.withLock { $0.dropFirst(count).first { $0.hasPrefix(prefix) } }
            return found != nil || !isRunning
        }
        return found ?? lines.withLock { $0.dropFirst(count).first { $0.hasPrefix(prefix) } }
    }

    /// Kills it with SIGKILL, as a crash or an OOM kill would.
    func killNow() {
        guard isRunning else { return }
        _ = kill(processIdentifier, SIGKILL)
    }

    /// Asks it to quit, waits for it to exit; kills it after `timeout`.
    func quit(timeout: Duration = .seconds(10)) {
        send("quit")
        try? input.close()
        if !realTimeWait(timeout: timeout, { !isRunning }) { killNow() }
        process.process.waitUntilExit()
        _ = closed.wait(timeout: .now() + 5)
    }
}
