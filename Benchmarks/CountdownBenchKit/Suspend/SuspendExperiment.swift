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
        var result = judge(worker.received, starts: starts, continuedAt: continuedAt, pausedFor: pausedFor)
        if result.lostFinishes > 0 { result.verdict += "; the worker " + worker.state }
        return result
    }

    /// `notBefore`: for a kill, the restore at which a countdown whose deadline passed while no
    /// worker ran could first finish; the kill verdict judges its finish from there.
    func judge(
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
}
