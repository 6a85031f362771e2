#if Redis
import Countdown
import CountdownRedis
import CountdownSupport
import Foundation

/// `workers` processes of one fleet (`countdown-bench fleet-worker`), each observing its share of
/// `countdowns` countdowns of 1–4 s and claiming what is due for all; one is killed with
/// SIGKILL at a random point of each round. Every finish the workers print is tallied by key:
/// heard once, doubled, or lost.
enum FleetKillExperiment {
    static func run(
        rounds: Int, workers: Int, countdowns: Int, server: RedisUnderTest, executable: URL, progress: (String) -> Void
    ) throws -> FleetDocument.KillRow {
        var row = FleetDocument.KillRow(
            rounds: rounds, workers: workers, countdowns: countdowns * rounds, owedToLiving: 0, heardByLiving: 0,
            doubled: 0, lostAmongLiving: 0, owedToKilled: 0)
        for round in 0..<rounds {
            let namespace = "fleet-kill-\(round)-\(UInt32.random(in: 0...UInt32.max))"
            let victim = Int.random(in: 0..<workers)
            let killAfter = Double.random(in: 1.0...4.5)
            progress("kill: round \(round + 1) of \(rounds): \(workers) workers, worker \(victim) killed after \(String(format: "%.2f", killAfter)) s")
            let processes = try (0..<workers).map { index in
                try spawn(executable, [
                    "fleet-worker", "--redis", server.endpoint.description, "--namespace", namespace,
                    "--index", String(index), "--workers", String(workers), "--count", String(countdowns),
                ])
            }
            let outputs = Locked([String](repeating: "", count: workers))
            let readers = DispatchGroup()
            for (index, (_, pipe)) in processes.enumerated() {
                readers.enter()
                Thread {
                    let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                    outputs.withLock { $0[index] = text }
                    readers.leave()
                }.start()
            }
            usleep(UInt32(killAfter * 1_000_000))
            kill(processes[victim].0.processIdentifier, SIGKILL)
            for (process, _) in processes { process.waitUntilExit() }
            readers.wait()
            let heard = outputs.withLock { $0 }.map { text in
                text.split(separator: "\n").compactMap { $0.hasPrefix("F ") ? Int($0.dropFirst(2)) : nil }
            }
            var counts = [Int](repeating: 0, count: countdowns)
            for keys in heard { for key in keys where key < countdowns { counts[key] += 1 } }
            for key in 0..<countdowns {
                let observer = key % workers
                if counts[key] > 1 { row.doubled += 1 }
                if observer == victim {
                    if counts[key] == 0 { row.owedToKilled += 1 }
                } else {
                    row.owedToLiving += 1
                    if counts[key] > 0 { row.heardByLiving += 1 } else { row.lostAmongLiving += 1 }
                }
            }
        }
        return row
    }

    private static func spawn(_ executable: URL, _ arguments: [String]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, pipe)
    }
}

/// `countdown-bench fleet-worker` (internal): one member of the kill experiment's fleet. Starts
/// and observes the countdowns numbered `index` modulo `workers` (1–4 s each, by number), claims
/// what is due for the whole fleet, prints `F <number>` for each finish it hears, and exits 8 s
/// after the last of its countdowns was due.
struct FleetWorkerCommand {
    let endpoint: RedisEndpoint
    let namespace: String
    let index: Int
    let workers: Int
    let count: Int

    init(arguments: [String]) throws(UsageError) {
        var args = Arguments(arguments, subcommand: "fleet-worker")
        guard let text = try args.value("--redis"), let endpoint = RedisEndpoint(text) else {
            throw UsageError("fleet-worker needs --redis HOST:PORT")
        }
        self.endpoint = endpoint
        guard let namespace = try args.value("--namespace") else { throw UsageError("fleet-worker needs --namespace") }
        self.namespace = namespace
        workers = try args.wholeNumber("--workers", in: 1...64) ?? 4
        index = try args.wholeNumber("--index", in: 0...63) ?? 0
        count = try args.wholeNumber("--count", in: 1...1_000_000) ?? 1000
        try args.finish()
        guard index < workers else { throw UsageError("fleet-worker: --index must be below --workers") }
    }

    /// The duration of countdown `n`: 1–4 s, the same in every worker.
    static func duration(of n: Int) -> Duration { .milliseconds(1000 + Int64((n * 7919) % 3000)) }

    func run(_ output: inout StandardStreams) throws -> Int32 {
        let scheduler = try RedisCountdownScheduler(endpoint: endpoint, namespace: namespace, tickInterval: .seconds(1))
        let mine = stride(from: index, to: count, by: workers).map { $0 }
        let answers = scheduler.start(mine.map { n in
            (key: "fleet-kill:\(n)", duration: Self.duration(of: n), observer: { (event: CountdownEvent) in
                if event.kind == .finished { FileHandle.standardOutput.write(Data("F \(n)\n".utf8)) }
            })
        })
        let failed = answers.filter { if case .failure = $0 { true } else { false } }.count
        if failed > 0 { output.writeError("fleet-worker: \(failed) starts failed\n") }
        Thread.sleep(forTimeInterval: 4 + 8)
        scheduler.shutdown()
        return 0
    }
}
#endif
