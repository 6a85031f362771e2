import CountdownSupport
import Countdown
import Foundation

extension SuspendExperiment {
    /// Starts the worker with a store, kills it (SIGKILL) at the scenario's points and relaunches
    /// it from the same store each time (under a wall clock set forward, when the scenario says
    /// so), and judges the finishes of every incarnation together against the original deadlines.
    func runKills(_ kill: Kill, executable: URL) throws -> Result {
        let folder = NSTemporaryDirectory() + "countdown-kill-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var clock: FakeTime.Offset?
        if scenario.clockJumpSeconds != nil {
            guard let offset = FakeTime.Offset() else { throw SuspendError(FakeTime.missing) }
            clock = offset
        }
        defer { clock?.remove() }
        let arguments = [
            "--backend", backend.description, "--keys", "\(keys)", "--store", folder + "/countdowns.store",
            "--tick", "\(tick.nanoseconds / 1000)us", "--duration", "\(duration.nanoseconds / 1000)us",
        ]
        let first = try WorkerProcess(
            arguments: arguments + (kill == .duringWrite ? ["--write-pause", "100ms"] : []),
            executable: executable, environment: clock?.environment ?? [:])
        var workers = [first]
        defer { for worker in workers { worker.end() } }
        guard first.waitFor(.started, count: keys, within: .seconds(10)) else {
            throw SuspendError("the \(backend) worker did not start its countdowns within 10 s")
        }
        let starts = Self.starts(first.received)
        let origin = starts.values.min() ?? SystemClocks.monotonic()
        let durationMs = duration.seconds * 1000
        let points: [Double]
        switch kill {
        case .atRandomPoints:
            // Anywhere in the countdown but its first and last moments, the two 300 ms apart.
            let early = Double.random(in: 150...(durationMs / 2 - 150))
            points = [early, Double.random(in: (early + 300)...(durationMs - 150))]
        case .duringWrite:
            points = [durationMs / 3]
        case .relaunchedAfterDeadline:
            points = [durationMs / 2]
        }
        var killedAt: [UInt64] = []
        var halfWritten = false
        var current = first
        for point in points {
            SystemClocks.sleep(untilMonotonic: origin + UInt64(point * 1e6))
            if kill == .duringWrite {
                guard current.request(.churn, answer: .writing) else {
                    throw SuspendError("the \(backend) worker did not write its store: \(current.state)")
                }
            }
            current.killNow()
            killedAt.append(SystemClocks.monotonic())
            let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            halfWritten = halfWritten || files.contains { $0.hasSuffix(".tmp") }
            if let clock, let jump = scenario.clockJumpSeconds { clock.set(seconds: jump) }
            if kill == .relaunchedAfterDeadline {
                SystemClocks.sleep(untilMonotonic: origin + UInt64(duration.nanoseconds) + 300_000_000)
            }
            current = try WorkerProcess(arguments: arguments + ["--relaunch"], executable: executable, environment: clock?.environment ?? [:])
            workers.append(current)
        }
        _ = current.waitFor(.done, within: duration + .seconds(5))
        // Each relaunch's restore: the first countdown it restored or found expired.
        let restoredAt = workers.dropFirst().map { worker in
            worker.received.lazy.compactMap { line -> UInt64? in
                switch line.message {
                case let .restored(_, _, at)?, let .expired(_, at)?: at
                default: nil
                }
            }.first
        }
        // A deadline that passed while no worker ran is kept at the restore that followed.
        let d = UInt64(duration.nanoseconds)
        var notBefore: [Int: UInt64] = [:]
        for (index, start) in starts {
            for (killed, restored) in zip(killedAt, restoredAt) {
                if let restored, start + d >= killed, start + d < restored { notBefore[index] = restored }
            }
        }
        var result = judge(
            workers.flatMap(\.received), starts: starts, continuedAt: killedAt.last ?? origin, pausedFor: 0, notBefore: notBefore)
        let killsAtMs = killedAt.map { Double($0 - origin) / 1e6 }
        result.killsAtMs = killsAtMs
        result.relaunchesMs = zip(killedAt, restoredAt).compactMap { killed, restored in restored.map { Double($0 - killed) / 1e6 } }
        result.deadlinesWhileDead = notBefore.count
        let writes = workers.flatMap(\.received).compactMap { if case let .wrote(ns)? = $0.message { Double(ns) / 1e6 } else { nil } }
        result.storeWrites = writes.count
        result.longestStoreWriteMs = writes.max()
        result.verdict += "; killed at " + killsAtMs.map { "\(Self.fmt($0)) ms" }.joined(separator: " and ")
        if kill == .duringWrite {
            result.leftHalfWrittenFile = halfWritten
            result.verdict += halfWritten ? ", mid-write (its half-written file was left)" : ", but no half-written file was left"
        }
        if let relaunches = result.relaunchesMs, let slowest = relaunches.max() {
            result.verdict += "; restored \(relaunches.map(Self.fmt).joined(separator: " and ")) ms after the kill"
            if !notBefore.isEmpty {
                result.verdict += " (\(notBefore.count) deadline(s) passed while no process ran: judged from the restore, "
                    + "\(Self.fmt(slowest)) ms at most after the kill)"
            }
        }
        if let longest = writes.max() {
            result.verdict += "; \(writes.count) store writes, the longest \(String(format: "%.1f", longest)) ms"
        }
        // What to look at when a finish is lost: how each incarnation ended, and what it said last.
        if result.lostFinishes > 0 {
            result.verdict += "; the workers: " + workers.map(\.state).joined(separator: "; then ")
        }
        return result
    }
}
