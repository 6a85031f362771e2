import CountdownSupport
import Countdown
import Foundation

/// One freeze of one backend's worker: start N countdowns in a child process, SIGSTOP it
/// mid-countdown, SIGCONT it after `freeze`, and judge what the countdowns did with the time
/// the process could not see; told `background` and `foreground` around the freeze, as UIKit
/// tells an app, when the scenario says so. Or, instead of a freeze, a jump of the worker's
/// wall clock, made with libfaketime (the machine's clock is not touched). Or a kill: the
/// worker, writing its countdowns to a `CountdownStore`, is killed with SIGKILL and relaunched
/// from the store, and every countdown must come back and finish once, on its deadline.
struct SuspendExperiment: Sendable {
    struct Scenario: Sendable, Codable {
        let name: String
        /// How long after the start the process is frozen.
        let freezeAfterMs: Double
        let freezeMs: Double
        /// The countdowns are paused before the freeze and resumed this long after it.
        let pausedResumeAfterMs: Double?
        /// Instead of a freeze: the worker's wall clock (CLOCK_REALTIME only) jumps by this
        /// much at `freezeAfterMs`. With `kill`: before the relaunch.
        var clockJumpSeconds: Double? = nil
        /// The worker is told `background` before the freeze and `foreground` after it.
        var notifiesLifecycle: Bool? = nil
        /// Instead of a freeze: SIGKILL, and a relaunch from the worker's store.
        var kill: Kill? = nil
    }

    enum Kill: String, Codable, Sendable {
        /// Twice, at random points of the countdown, each followed by a relaunch.
        case atRandomPoints = "random-points"
        /// Once, half-way through a write of the store (the worker pauses there for it).
        case duringWrite = "during-write"
        /// Once, half-way through the countdown, and relaunched only after the deadline: the
        /// app opened again once the code could be asked for again.
        case relaunchedAfterDeadline = "after-deadline"
    }

    let backend: CountdownBackend
    let scenario: Scenario
    let keys: Int
    let tick: Duration
    let duration: Duration

    struct Result: Codable, Sendable {
        let backend: String
        let scenario: Scenario
        let keys: Int
        /// Finish − the deadline (start + D, moved by the time spent paused), per key, ms.
        let finishErrorsMs: [Double]
        /// Finish − the moment the process was continued: > 0 when the deadline passed in the freeze.
        let finishAfterContinueMs: [Double]
        /// The first tick after the freeze: remaining shown − true remaining, per key, ms.
        let firstTickErrorsMs: [Double]
        /// Ticks per key that arrived after the continue and before the next grid point
        /// (start + k·T): catch-up ticks, a burst if more than one. Nil when the countdowns
        /// were paused through the freeze (their ticks resume on a moved grid), or for a clock jump.
        let burstTicks: Int?
        let lostFinishes: Int
        let doubledFinishes: Int
        /// For a kill: when the worker was killed, ms after the first start.
        var killsAtMs: [Double]? = nil
        /// For a kill during a write: whether the killed worker left its half-written file
        /// beside the store (the proof that the kill hit the write).
        var leftHalfWrittenFile: Bool? = nil
        /// For a kill: how many times the workers wrote their store, and the longest write, ms.
        /// A finish is delivered once its write is done, so a slow write makes a late finish.
        var storeWrites: Int? = nil
        var longestStoreWriteMs: Double? = nil
        /// For a kill: from each kill to the relaunched worker's restore, ms. A countdown whose
        /// deadline passed in between cannot finish before the restore, and is judged from it.
        var relaunchesMs: [Double]? = nil
        /// For a kill: the countdowns whose deadline passed while no worker ran.
        var deadlinesWhileDead: Int? = nil
        /// Whether it did what the backend's profile declares; and why, in words.
        let asDeclared: Bool
        var verdict: String
    }

    func run(executable: URL = WorkerProcess.executable) throws -> Result {
        if let kill = scenario.kill { return try runKills(kill, executable: executable) }
        var clock: FakeTime.Offset?
        if scenario.clockJumpSeconds != nil {
            guard let offset = FakeTime.Offset() else { throw SuspendError(FakeTime.missing) }
            clock = offset
        }
        defer { clock?.remove() }
        let worker = try WorkerProcess(arguments: [
            "--backend", backend.description, "--keys", "\(keys)",
            "--tick", "\(tick.nanoseconds / 1000)us", "--duration", "\(duration.nanoseconds / 1000)us",
        ], executable: executable, environment: clock?.environment ?? [:])
        defer { worker.end() }
        guard worker.waitFor(.started, count: keys, within: .seconds(10)) else {
            throw SuspendError("the \(backend) worker did not start its countdowns within 10 s")
        }
        let starts = Self.starts(worker.received)
        let first = starts.values.min() ?? SystemClocks.monotonic()
        let ms: (Double) -> UInt64 = { UInt64($0 * 1e6) }
        SystemClocks.sleep(untilMonotonic: first + ms(scenario.freezeAfterMs))
        if let clock, let jump = scenario.clockJumpSeconds {
            clock.set(seconds: jump)
            let jumpedAt = SystemClocks.monotonic()
            _ = worker.waitFor(.done, within: duration + .seconds(5))
            return judge(worker.received, starts: starts, continuedAt: jumpedAt, pausedFor: 0)
        }
        var pausedAt: UInt64?
        if scenario.pausedResumeAfterMs != nil {
            guard worker.request(.pause, answer: .paused) else { throw SuspendError("the \(backend) worker did not pause: \(worker.state)") }
            pausedAt = worker.received.lazy.compactMap { if case let .paused(at)? = $0.message { at } else { nil } }.first
        }
        let notifies = scenario.notifiesLifecycle ?? false
        if notifies {
            guard worker.request(.background, answer: .background) else {
                throw SuspendError("the \(backend) worker did not take the background: \(worker.state)")
            }
        }
        worker.stop()
        let stoppedAt = SystemClocks.monotonic()
        SystemClocks.sleep(untilMonotonic: stoppedAt + ms(scenario.freezeMs))
        // Read before the signal: the worker cannot run before it, so no event it reports can
        // come before this instant (read after, a fast worker's first event beat it).
        let continuedAt = SystemClocks.monotonic()
        worker.continue()
        if notifies {
            // Every countdown may have finished on the continue, before the foreground was
            // read (a deadline the freeze overran, on a backend that reads a clock): the worker
            // is then done, and the foreground has nothing left to do.
            guard worker.request(.foreground, answer: .foreground) || worker.count(.done) > 0 else {
                throw SuspendError("the \(backend) worker did not take the foreground: \(worker.state)")
            }
        }
        var pausedFor: UInt64 = 0
        if let resumeAfter = scenario.pausedResumeAfterMs, let pausedAt {
            SystemClocks.sleep(untilMonotonic: continuedAt + ms(resumeAfter))
            guard worker.request(.resume, answer: .resumed) else { throw SuspendError("the \(backend) worker did not resume: \(worker.state)") }
            pausedFor = (worker.received.lazy.compactMap { if case let .resumed(at)? = $0.message { at } else { nil } }.first ?? continuedAt) - pausedAt
        }
        let limit = duration + .milliseconds(Int64(scenario.freezeMs)) + .seconds(5)
        _ = worker.waitFor(.done, within: limit)
        return judge(worker.received, starts: starts, continuedAt: continuedAt, pausedFor: pausedFor)
    }

    /// Starts the worker with a store, kills it (SIGKILL) at the scenario's points and relaunches
    /// it from the same store each time (under a wall clock set forward, when the scenario says
    /// so), and judges the finishes of every incarnation together against the original deadlines.
    private func runKills(_ kill: Kill, executable: URL) throws -> Result {
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
        return result
    }

    /// `notBefore`: for a kill, the restore at which a countdown whose deadline passed while no
    /// worker ran could first finish; the kill verdict judges its finish from there.
    private func judge(
        _ lines: [WorkerProcess.Line], starts: [Int: UInt64], continuedAt: UInt64, pausedFor: UInt64,
        notBefore: [Int: UInt64] = [:]
    ) -> Result {
        let d = UInt64(duration.nanoseconds), t = UInt64(tick.nanoseconds)
        var finishes: [Int: [UInt64]] = [:]
        var firstTickError: [Int: Double] = [:]
        var burst: [Int: Int] = [:]
        for line in lines {
            // A countdown whose deadline passed while no worker ran was heard of at the restore.
            if case let .expired(index, at)? = line.message, starts[index] != nil {
                finishes[index, default: []].append(at)
                continue
            }
            guard case let .event(index, kind, remaining, at)? = line.message, let start = starts[index] else { continue }
            let deadline = start + d + pausedFor
            if kind == .finished {
                finishes[index, default: []].append(at)
            } else if at >= continuedAt {
                if firstTickError[index] == nil {
                    let truth = Double(Int64(deadline) - Int64(at)) / 1e6
                    firstTickError[index] = Double(remaining) / 1e6 - truth
                }
                // Ticks before the first grid point after the continue are catch-up ticks;
                // more than one of them is a burst. A tick at or after that grid point is due.
                let nextGridPoint = start + ((continuedAt - start) / t + 1) * t + pausedFor
                if at < nextGridPoint { burst[index, default: 0] += 1 }
            }
        }
        let keysSorted = starts.keys.sorted()
        let finishErrors = keysSorted.compactMap { index in
            finishes[index]?.first.map { Double(Int64($0) - Int64(starts[index]! + d + pausedFor)) / 1e6 }
        }
        let afterContinue = keysSorted.compactMap { index in
            finishes[index]?.first.map { Double(Int64($0) - Int64(continuedAt)) / 1e6 }
        }
        // From the deadline, or from the restore when the deadline passed while no worker ran.
        let afterPossible = keysSorted.compactMap { index in
            finishes[index]?.first.map { Double(Int64($0) - Int64(max(starts[index]! + d + pausedFor, notBefore[index] ?? 0))) / 1e6 }
        }
        let lost = keysSorted.filter { finishes[$0] == nil }.count
        let doubled = keysSorted.filter { (finishes[$0]?.count ?? 0) > 1 }.count
        let burstTicks = burst.values.max() ?? 0
        let (asDeclared, verdict) = Self.verdict(
            profile: try? backend.profile(), scenario: scenario, tickMs: tick.seconds * 1000,
            durationMs: duration.seconds * 1000, finishErrors: scenario.kill == nil ? finishErrors : afterPossible,
            afterContinue: afterContinue, burst: burstTicks, lost: lost, doubled: doubled)
        let hasBurst = scenario.pausedResumeAfterMs == nil && scenario.clockJumpSeconds == nil && scenario.kill == nil
        return Result(
            backend: backend.description, scenario: scenario, keys: keys, finishErrorsMs: finishErrors,
            finishAfterContinueMs: afterContinue, firstTickErrorsMs: keysSorted.compactMap { firstTickError[$0] },
            burstTicks: hasBurst ? burstTicks : nil, lostFinishes: lost, doubledFinishes: doubled, asDeclared: asDeclared, verdict: verdict)
    }

    /// What the profile promises, checked with one-sided bounds and a tolerance of two ticks
    /// (plus 100 ms for a loaded machine): a tick-counting backend loses the frozen time
    /// (finishes at least freeze − 2T late); a deadline backend does not (finishes within the
    /// tolerance of its deadline, or of the continue when the deadline passed in the freeze),
    /// with at most one catch-up tick. Paused through the freeze, nobody finishes early and a
    /// deadline backend finishes on its moved deadline. Nobody loses or doubles a finish.
    static func verdict(
        profile: CountdownProfile?, scenario: Scenario, tickMs: Double, durationMs: Double, finishErrors: [Double],
        afterContinue: [Double], burst: Int, lost: Int, doubled: Int
    ) -> (Bool, String) {
        if scenario.kill != nil {
            return killVerdict(profile: profile, tickMs: tickMs, finishErrors: finishErrors, lost: lost, doubled: doubled)
        }
        if let jump = scenario.clockJumpSeconds {
            return clockVerdict(profile: profile, jump: jump, durationMs: durationMs, after: scenario.freezeAfterMs,
                                finishErrors: finishErrors, tolerance: 2 * tickMs + 100, unfinished: lost, doubled: doubled)
        }
        if lost > 0 { return (false, "\(lost) finish(es) LOST") }
        if doubled > 0 { return (false, "\(doubled) finish(es) DOUBLED") }
        guard let profile, let worst = finishErrors.max(), let best = finishErrors.min() else { return (false, "no finishes") }
        let tolerance = 2 * tickMs + 100
        let freeze = scenario.freezeMs
        // Told of the background and the foreground, every backend keeps its deadline: a tick
        // counter takes off the frozen time. Its catch-up fire and the foreground's corrected
        // tick may both come before the next grid point: two ticks, not a burst.
        let suspension = scenario.notifiesLifecycle == true ? .keepsDeadline : profile.suspension
        let allowedBurst = scenario.notifiesLifecycle == true ? 2 : 1
        if scenario.pausedResumeAfterMs != nil {
            // Paused, a countdown has nothing to lose to the freeze: a deadline backend finishes
            // on the moved deadline; a tick-counting one is never early (it may be late for
            // reasons of its own: the operation-queue worker waits for a pool thread).
            if best < -50 { return (false, "paused through the freeze, yet finished \(fmt(-best)) ms EARLY") }
            switch profile.suspension {
            case .keepsDeadline where worst > tolerance:
                return (false, "paused through the freeze, yet finished \(fmt(worst)) ms after its moved deadline")
            case .keepsDeadline:
                return (true, "paused through the freeze: finished on the moved deadline (+\(fmt(worst)) ms at most)")
            case .finishesLateByFreeze:
                return (true, "paused through the freeze: finished \(fmt(best))…\(fmt(worst)) ms after the moved deadline")
            }
        }
        switch suspension {
        case .finishesLateByFreeze:
            // Grid points the freeze swallowed beyond the one fire that follows it.
            let expected = max(0, (freeze / tickMs).rounded(.down) - 1) * tickMs
            return best >= expected - tickMs - 50
                ? (true, "lost the freeze: finished \(fmt(best))…\(fmt(worst)) ms late (counts ticks, as declared)")
                : (false, "declares it finishes late by the freeze, but finished only \(fmt(best)) ms late")
        case .keepsDeadline:
            if burst > allowedBurst { return (false, "\(burst) ticks in a burst after the freeze") }
            let passedInFreeze = afterContinue.allSatisfy { $0 >= 0 } && durationMs <= scenario.freezeAfterMs + freeze
            let late = passedInFreeze ? (afterContinue.max() ?? 0) : worst
            let catchUp = burst == 2 ? "a catch-up tick and the foreground's corrected one" : "\(burst) catch-up tick"
            if late <= tolerance && best >= 0 {
                return (true, passedInFreeze
                    ? "deadline passed in the freeze: finished \(fmt(late)) ms after the continue"
                    : "kept its deadline: finished \(fmt(best))…\(fmt(worst)) ms after it, \(catchUp)")
            }
            // Notified, a backend whose drift accumulates may still be late for reasons of its
            // own (an operation-queue worker waiting for a pool thread). Had the notification
            // done nothing, every countdown would have lost the freeze: one on time shows it worked.
            let onTime = passedInFreeze ? (afterContinue.min() ?? late) : best
            if scenario.notifiesLifecycle == true, profile.drift == .accumulates, best >= 0, onTime <= tolerance {
                return (true, "notified, it took off the freeze: finished \(fmt(best))…\(fmt(worst)) ms after its deadline, "
                    + "the later ones late for reasons of their own (drift accumulates, as declared)")
            }
            return (false, "declares it keeps its deadline, but finished \(fmt(worst)) ms after it")
        }
    }

    /// Killed and relaunched from the store: every countdown finishes once, never before its
    /// original deadline, and within one tick after it, or after the restore when its deadline
    /// passed while no process ran (`finishErrors` are measured from the later of the two). A backend whose declared drift
    /// accumulates may be later, for reasons of its own (the operation-queue worker waits for
    /// a pool thread in the relaunched process), and the words say so.
    static func killVerdict(
        profile: CountdownProfile?, tickMs: Double, finishErrors: [Double], lost: Int, doubled: Int
    ) -> (Bool, String) {
        if lost > 0 { return (false, "\(lost) finish(es) LOST") }
        if doubled > 0 { return (false, "\(doubled) finish(es) DOUBLED") }
        guard let best = finishErrors.min(), let worst = finishErrors.max() else { return (false, "no finishes") }
        if best < -1 { return (false, "finished \(fmt(-best)) ms EARLY") }
        if worst <= tickMs {
            return (true, "every countdown came back and finished once, \(fmt(best))…\(fmt(worst)) ms after its original deadline (or its restore)")
        }
        let within = finishErrors.filter { $0 <= tickMs }.count
        return profile?.drift == .accumulates
            ? (true, "came back and finished once, \(fmt(best))…\(fmt(worst)) ms late (\(within) of \(finishErrors.count) within a tick): "
                + "late for reasons of its own, as without a kill (drift accumulates, as declared)")
            : (false, "came back, but finished up to \(fmt(worst)) ms after its original deadline or its restore (\(within) of \(finishErrors.count) within a tick)")
    }

    /// The wall clock set forward: an immune backend is not moved (it does not finish early;
    /// it may be late for reasons of its own, as the operation-queue worker waiting for a pool
    /// thread is); one that follows the wall clock finishes at least half of what remained early.
    static func clockVerdict(
        profile: CountdownProfile?, jump: Double, durationMs: Double, after: Double, finishErrors: [Double],
        tolerance: Double, unfinished: Int, doubled: Int
    ) -> (Bool, String) {
        if doubled > 0 { return (false, "\(doubled) finish(es) DOUBLED") }
        guard let profile else { return (false, "no profile") }
        guard unfinished == 0, let best = finishErrors.min(), let worst = finishErrors.max() else {
            return (false, "\(unfinished) countdown(s) did not finish after the wall clock was set forward")
        }
        switch profile.wallClockJump {
        case .immune:
            return best >= -50
                ? (true, "immune: clock set forward, finished \(fmt(best))…\(fmt(worst)) ms after its deadline")
                : (false, "declares itself immune, but finished \(fmt(-best)) ms early")
        case .movesCountdown:
            let remaining = durationMs - after
            return worst <= -remaining / 2
                ? (true, "moved: clock set forward, finished \(fmt(-worst)) ms early or more")
                : (false, "declares it follows the wall clock, but finished only \(fmt(-worst)) ms early")
        }
    }

    private static func fmt(_ value: Double) -> String { String(format: "%.0f", value) }

    static func starts(_ lines: [WorkerProcess.Line]) -> [Int: UInt64] {
        var starts: [Int: UInt64] = [:]
        for line in lines {
            if case let .started(index, at)? = line.message { starts[index] = at }
        }
        return starts
    }
}

struct SuspendError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
