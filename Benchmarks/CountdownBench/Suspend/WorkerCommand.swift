import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// `countdown-bench worker` (internal): runs N countdowns on one backend in this process and
/// streams every event to stdout, one line each, for `countdown-bench suspend` (the parent),
/// which freezes this process with SIGSTOP and continues it with SIGCONT.
///
/// Lines out are ``WorkerMessage``s, lines in ``WorkerInstruction``s.
struct WorkerCommand {
    static let usage = """
        USAGE: countdown-bench worker --backend NAME [--keys N] [--tick DURATION] [--duration DURATION]

        Internal: the child process of countdown-bench suspend. Runs N countdowns on one backend
        and writes every event, with its CLOCK_MONOTONIC timestamp, to stdout.
        """

    let backend: CountdownBackend?
    let keys: Int
    let tick: Duration
    let duration: Duration
    let showHelp: Bool

    init(arguments: [String]) throws(UsageError) {
        var args = Arguments(arguments, subcommand: "worker")
        showHelp = args.flag("-h", "--help")
        let name = try args.value("--backend")
        if let name {
            guard let backend = CountdownBackend.allWithVariants.first(where: { $0.description == name }) else {
                throw UsageError("worker: --backend takes one of \(CountdownBackend.allWithVariants.map(\.description).joined(separator: ", ")), not '\(name)'")
            }
            self.backend = backend
        } else {
            backend = nil
        }
        keys = try args.wholeNumber("--keys", in: 1...10_000) ?? 4
        tick = try args.duration("--tick") ?? .milliseconds(200)
        duration = try args.duration("--duration") ?? .seconds(2)
        try args.finish()
        guard showHelp || backend != nil else { throw UsageError("worker: --backend is required") }
    }

    func run(_ output: inout StandardStreams) throws -> Int32 {
        guard let backend, !showHelp else {
            output.write(Self.usage + "\n")
            return 0
        }
        let lines = LineWriter()
        let delivery = DispatchQueue(label: "worker.delivery")
        let scheduler = try backend.makeScheduler(.init(tickInterval: tick, deliveryQueue: delivery, capacity: keys))
        let finished = DispatchSemaphore(value: 0)
        lines.write(.ready)
        for index in 0..<keys {
            lines.write(.started(index: index, at: SystemClocks.monotonic()))
            try scheduler.start(key: "key-\(index)", duration: duration) { event in
                let now = SystemClocks.monotonic()
                lines.write(.event(index: index, kind: event.kind, remaining: event.remaining.nanoseconds, at: now))
                if event.kind == .finished { finished.signal() }
            }
        }
        let commands = Thread {
            while let line = readLine() {
                switch WorkerInstruction(rawValue: line) {
                case .pause:
                    for index in 0..<keys { scheduler.pause(key: "key-\(index)") }
                    lines.write(.paused(at: SystemClocks.monotonic()))
                case .resume:
                    for index in 0..<keys { scheduler.resume(key: "key-\(index)") }
                    lines.write(.resumed(at: SystemClocks.monotonic()))
                case .quit:
                    exit(0)
                case nil:
                    lines.write(.unknown(line))
                }
            }
        }
        commands.start()
        for _ in 0..<keys { finished.wait() }
        delivery.sync {}
        lines.write(.done)
        scheduler.shutdown()
        return 0
    }
}

/// Messages to stdout, a line each, written with one `write(2)` so that lines from different
/// threads never interleave and the parent sees each as soon as it is written.
final class LineWriter: Sendable {
    func write(_ message: WorkerMessage) {
        var text = message.line + "\n"
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Foundation.write(STDOUT_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
