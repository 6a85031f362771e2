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
                                      [--store PATH [--relaunch] [--write-pause DURATION]]

        Internal: the child process of countdown-bench suspend. Runs N countdowns on one backend
        and writes every event, with its CLOCK_MONOTONIC timestamp, to stdout.

        --store PATH             Restore from, and write every change to, this CountdownStore.
        --relaunch               Start nothing: restore the store's countdowns and attach to each,
                                 as a relaunched app's screens would.
        --write-pause DURATION   Pause each store write half-way, after telling the parent: where
                                 the parent kills the worker during a write.
        """

    let backend: CountdownBackend?
    let keys: Int
    let tick: Duration
    let duration: Duration
    let storePath: String?
    let isRelaunch: Bool
    let writePause: Duration?
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
        storePath = try args.value("--store")
        isRelaunch = args.flag("--relaunch")
        writePause = try args.duration("--write-pause")
        try args.finish()
        guard showHelp || backend != nil else { throw UsageError("worker: --backend is required") }
        if storePath == nil, isRelaunch || writePause != nil {
            throw UsageError("worker: --relaunch and --write-pause need --store")
        }
    }

    func run(_ output: inout StandardStreams) throws -> Int32 {
        guard let backend, !showHelp else {
            output.write(Self.usage + "\n")
            return 0
        }
        let lines = LineWriter()
        let delivery = DispatchQueue(label: "worker.delivery")
        // One more than the keys: the churn countdown's.
        let scheduler = try backend.makeScheduler(.init(tickInterval: tick, deliveryQueue: delivery, capacity: keys + 1))
        let finished = DispatchSemaphore(value: 0)
        let observer = { (index: Int) -> CountdownObserver in
            { event in
                let now = SystemClocks.monotonic()
                lines.write(.event(index: index, kind: event.kind, remaining: event.remaining.nanoseconds, at: now))
                if event.kind == .finished { finished.signal() }
            }
        }
        var awaited = keys
        if let storePath {
            let restored = try restore(scheduler, from: storePath, lines: lines, observer: observer)
            if isRelaunch { awaited = restored }
        }
        lines.write(.ready)
        for index in 0..<keys where !isRelaunch {
            lines.write(.started(index: index, at: SystemClocks.monotonic()))
            try scheduler.start(key: "key-\(index)", duration: duration, observer: observer(index))
        }
        // Held while an instruction is carried out: the last finish may come from inside one
        // (a foreground that finishes what the freeze overran), and the process must not end
        // before that instruction has answered.
        let handling = Locked(())
        let carryOut: @Sendable (String) -> Void = { line in
            switch WorkerInstruction(rawValue: line) {
            case .pause:
                for index in 0..<keys { scheduler.pause(key: "key-\(index)") }
                lines.write(.paused(at: SystemClocks.monotonic()))
            case .resume:
                for index in 0..<keys { scheduler.resume(key: "key-\(index)") }
                lines.write(.resumed(at: SystemClocks.monotonic()))
            case .background:
                scheduler.enteredBackground()
                lines.write(.background(at: SystemClocks.monotonic()))
            case .foreground:
                scheduler.enteredForeground()
                lines.write(.foreground(at: SystemClocks.monotonic()))
            case .churn:
                _ = try? scheduler.start(key: "churn", duration: .seconds(60)) { _ in }
                scheduler.cancel(key: "churn")
            case .quit:
                exit(0)
            case nil:
                lines.write(.unknown(line))
            }
        }
        let commands = Thread {
            var input = InstructionLines()
            while let line = input.next() {
                handling.withLock { _ in carryOut(line) }
            }
        }
        commands.start()
        for _ in 0..<awaited { finished.wait() }
        delivery.sync {}
        handling.withLock { _ in lines.write(.done) }
        scheduler.shutdown()
        return 0
    }

    /// Restores the store's countdowns and attaches an observer to each, as the screens of a
    /// relaunched app would; returns how many finishes to wait for (those attached to).
    private func restore(
        _ scheduler: any CountdownScheduler, from path: String, lines: LineWriter,
        observer: (Int) -> CountdownObserver
    ) throws -> Int {
        guard let keyed = scheduler as? KeyedCountdownScheduler else {
            throw UsageError("worker: --store needs a built-in backend; \(scheduler.profile.displayName) has no restore(from:)")
        }
        let midWrite = writePause.map { pause in
            { @Sendable in
                lines.write(.writing(at: SystemClocks.monotonic()))
                SystemClocks.sleep(untilMonotonic: SystemClocks.monotonic() + UInt64(pause.nanoseconds))
            }
        }
        let hooks = StoreHooks(midWrite: midWrite, wrote: { lines.write(.wrote(nanoseconds: $0.nanoseconds)) })
        let restoration = try keyed.restore(from: CountdownStore(path: path, clocks: .system, hooks: hooks))
        let index = { (key: String) in Int(key.dropFirst("key-".count)) ?? -1 }
        let now = SystemClocks.monotonic()
        for key in restoration.expired { lines.write(.expired(index: index(key), at: now)) }
        let restored = restoration.running.merging(restoration.paused) { running, _ in running }
        var attached = 0
        for (key, remaining) in restored.sorted(by: { $0.key < $1.key }) {
            lines.write(.restored(index: index(key), remaining: remaining.nanoseconds, at: SystemClocks.monotonic()))
            if keyed.attach(key: key, observer: observer(index(key))) != nil {
                attached += 1
            } else {
                // It finished before a screen could attach: restore returns once the file holds
                // what it restored, and a countdown with less left than that write took ended
                // meanwhile, heard by no one, as an expired one is. The app learns it here, as
                // the attach finds nothing (beside a loaded machine a write took 400 ms, and
                // the worker waited for finishes that had already come).
                lines.write(.expired(index: index(key), at: SystemClocks.monotonic()))
            }
        }
        return attached
    }
}

/// The parent's instructions, a line each, read from stdin with read(2). Not `readLine()`: the
/// C library's stdio gives up on a read a signal interrupts and reports the end of the input,
/// and this process is stopped and continued on purpose; an instruction must never be lost.
struct InstructionLines {
    private var pending: [UInt8] = []

    /// The next line, without its newline; nil at the end of the input (the parent is gone).
    mutating func next() -> String? {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = buffer.withUnsafeMutableBytes { Foundation.read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return nil }
            pending += buffer[..<count]
        }
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
