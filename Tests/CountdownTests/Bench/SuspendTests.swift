import Countdown
import CountdownSupport
import Foundation
import Testing

@testable import CountdownBenchKit

/// The suspension experiment for real: each built-in backend in a `countdown-bench worker`
/// child process (the debug build beside this test binary), frozen with SIGSTOP and continued.
/// Bounds are one-sided or generous (two ticks + 100 ms); a hung worker fails at its limit.
/// Not under ThreadSanitizer: the code it exercises runs in the workers, child processes whose
/// sanitizer reports nobody reads, and the suite took a minute and a half of that run (the
/// release build's `countdown-bench suspend` in CI runs every row of it).
@Suite(.serialized, .dedicatedThread,
       .enabled(if: ThreadSanitizer.acquire == nil, "the workers are child processes; the sanitizer's reports there go unread"))
struct SuspendTests {
    static var executable: URL {
        let tests = URL(fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0])
        return tests.deletingLastPathComponent().appendingPathComponent("countdown-bench")
    }

    func experiment(_ backend: CountdownBackend, _ scenario: SuspendExperiment.Scenario) throws -> SuspendExperiment.Result {
        try SuspendExperiment(
            backend: backend, scenario: scenario, keys: 3, tick: SuspendCommand.tick, duration: SuspendCommand.duration
        ).run(executable: Self.executable)
    }

    @Test(.runsAlone, .timeLimit(.minutes(2)), arguments: CountdownBackend.allWithVariants.map(\.description))
    func aFrozenProcessDoesWhatTheBackendDeclares(_ name: String) throws {
        try #require(FileManager.default.isExecutableFile(atPath: Self.executable.path), "no \(Self.executable.path)")
        let backend = try #require(CountdownBackend.allWithVariants.first { $0.description == name })
        let declared = try backend.makeScheduler().profile.suspension
        let several = SuspendCommand.defaultScenarios[1], paused = SuspendCommand.defaultScenarios[3]

        let frozen = try experiment(backend, several)
        #expect(frozen.lostFinishes == 0 && frozen.doubledFinishes == 0, "\(frozen.verdict)")
        #expect(frozen.finishErrorsMs.count == 3)
        #expect(frozen.asDeclared, "\(name): \(frozen.verdict)")
        let earliest = try #require(frozen.finishErrorsMs.min())
        switch declared {
        case .finishesLateByFreeze:
            // 650 ms frozen at 200 ms ticks: at least two whole ticks are never counted.
            #expect(earliest >= 2 * 200 - 200 - 50, "\(name) counts ticks, yet finished only \(earliest) ms late")
        case .keepsDeadline:
            #expect(earliest >= 0 && (frozen.finishErrorsMs.max() ?? 0) <= 500, "\(name): \(frozen.finishErrorsMs)")
            #expect((frozen.burstTicks ?? 0) <= 1, "one catch-up tick, not a burst")
            #expect(frozen.burstTicks != nil)
        }

        let whilePaused = try experiment(backend, paused)
        #expect(whilePaused.lostFinishes == 0 && whilePaused.doubledFinishes == 0)
        #expect(whilePaused.asDeclared, "\(name) paused: \(whilePaused.verdict)")

        // Told background and foreground around the same freeze, a tick counter takes it off.
        let notified = try experiment(backend, SuspendCommand.lifecycleScenarios[0])
        #expect(notified.lostFinishes == 0 && notified.doubledFinishes == 0, "\(notified.verdict)")
        #expect(notified.asDeclared, "\(name) notified: \(notified.verdict)")
        let earliestNotified = try #require(notified.finishErrorsMs.min())
        #expect(earliestNotified >= 0 && earliestNotified < 350, "\(name) notified still lost the freeze: \(notified.finishErrorsMs)")
    }

    @Test(.runsAlone, .timeLimit(.minutes(2)), arguments: CountdownBackend.allWithVariants.map(\.description))
    func killedMidWriteAndRelaunchedEveryCountdownComesBackOnce(_ name: String) throws {
        let backend = try #require(CountdownBackend.allWithVariants.first { $0.description == name })
        let result = try experiment(backend, SuspendCommand.killScenarios[1])
        #expect(result.leftHalfWrittenFile == true, "the kill did not land in a write: \(result.verdict)")
        #expect(result.finishErrorsMs.count == 3, "\(result.finishErrorsMs)")
        #expect(result.lostFinishes == 0 && result.doubledFinishes == 0, "\(result.verdict)")
        #expect(result.finishErrorsMs.allSatisfy { $0 >= -1 }, "finished before the original deadline: \(result.finishErrorsMs)")
        #expect(result.asDeclared, "\(name): \(result.verdict)")
    }

    @Test(.runsAlone, .timeLimit(.minutes(1)), arguments: ["timestamp(continuous)", "dispatch-source"])
    func killedTwiceAtRandomAndRelaunched(_ name: String) throws {
        let backend = try #require(CountdownBackend.allWithVariants.first { $0.description == name })
        let result = try experiment(backend, SuspendCommand.killScenarios[0])
        #expect(result.killsAtMs?.count == 2)
        #expect(result.relaunchesMs?.count == 2 && result.relaunchesMs!.allSatisfy { $0 > 0 }, "\(result.verdict)")
        #expect(result.lostFinishes == 0 && result.doubledFinishes == 0, "\(result.verdict)")
        #expect(result.asDeclared, "\(name): \(result.verdict)")
    }

    /// The app opened again after the code could be asked for again: every countdown is
    /// reported expired at the restore, once, and judged from the restore, not the deadline.
    @Test(.runsAlone, .timeLimit(.minutes(1)), arguments: ["timestamp(continuous)", "run-loop"])
    func relaunchedAfterTheDeadline(_ name: String) throws {
        let backend = try #require(CountdownBackend.allWithVariants.first { $0.description == name })
        let result = try experiment(backend, SuspendCommand.killScenarios[2])
        #expect(result.deadlinesWhileDead == 3, "\(result.verdict)")
        #expect(result.lostFinishes == 0 && result.doubledFinishes == 0, "\(result.verdict)")
        // The restore came at least 300 ms after the deadline: so late against the deadline.
        #expect(result.finishErrorsMs.count == 3 && result.finishErrorsMs.allSatisfy { $0 >= 300 }, "\(result.finishErrorsMs)")
        #expect(result.asDeclared, "\(name): \(result.verdict)")
    }

    /// A relaunch's restore returns once the file holds what it restored; a countdown with less
    /// left than that write takes ends meanwhile, heard by no one, and the screen's attach finds
    /// nothing. The worker reports it ended (as an expired one) rather than waiting for its
    /// finish: beside a loaded machine a write took 400 ms, and `suspend` counted four finishes
    /// lost that had come. Here each restore write pauses a second, the countdowns 450 ms from
    /// their deadline.
    @Test(.runsAlone, .timeLimit(.minutes(1)), arguments: ["timestamp(continuous)", "operation-queue"])
    func aCountdownThatEndsWhileTheRestoreWritesIsReportedNotAwaited(_ name: String) throws {
        let folder = NSTemporaryDirectory() + "countdown-restore-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let arguments = ["--backend", name, "--keys", "3", "--store", folder + "/countdowns.store", "--tick", "200000us", "--duration", "1000000us"]
        let first = try WorkerProcess(arguments: arguments, executable: Self.executable)
        defer { first.end() }
        try #require(first.waitFor(.started, count: 3, within: .seconds(10)), "\(first.state)")
        let origin = try #require(SuspendExperiment.starts(first.received).values.max())
        SystemClocks.sleep(untilMonotonic: origin + 550_000_000)
        first.killNow()
        let relaunched = try WorkerProcess(arguments: arguments + ["--relaunch", "--write-pause", "1s"], executable: Self.executable)
        defer { relaunched.end() }
        #expect(relaunched.waitFor(.done, within: .seconds(10)), "the relaunched worker waits for finishes that came: \(relaunched.state)")
        var heard: [Int: Int] = [:]
        for line in relaunched.received {
            switch line.message {
            case let .event(index, .finished, _, _)?, let .expired(index, _)?: heard[index, default: 0] += 1
            default: break
            }
        }
        #expect(heard == [0: 1, 1: 1, 2: 1], "each countdown finished or reported ended once: \(heard); \(relaunched.state)")
    }

    @Test(.runsAlone, .timeLimit(.minutes(1)))
    func aDeadlinePassedInTheFreezeFinishesOnContinue() throws {
        let result = try experiment(.timestamp(.continuous), SuspendCommand.defaultScenarios[2])
        #expect(result.asDeclared, "\(result.verdict)")
        #expect(result.finishAfterContinueMs.allSatisfy { $0 >= 0 && $0 <= 500 }, "\(result.finishAfterContinueMs)")
    }

    @Test func theVerdictRejectsWhatABackendDidNotDeclare() {
        let keeps = CountdownProfile(name: "x", mechanism: "", threads: "", suspension: .keepsDeadline, wallClockJump: .immune, capacity: nil, maximumDuration: .seconds(60))
        var counts = keeps
        counts.suspension = .finishesLateByFreeze
        let scenario = SuspendCommand.defaultScenarios[1]
        func verdict(_ p: CountdownProfile, errors: [Double], burst: Int = 1, lost: Int = 0, doubled: Int = 0) -> Bool {
            SuspendExperiment.verdict(profile: p, scenario: scenario, tickMs: 200, durationMs: 2000, finishErrors: errors,
                                      afterContinue: errors, burst: burst, lost: lost, doubled: doubled).0
        }
        #expect(verdict(keeps, errors: [5, 12]))
        #expect(!verdict(keeps, errors: [690, 700]), "declares it keeps its deadline, lost the freeze")
        #expect(!verdict(keeps, errors: [5, 12], burst: 3), "a burst of catch-up ticks")
        #expect(verdict(counts, errors: [600, 640]))
        #expect(!verdict(counts, errors: [5, 12]), "declares it counts ticks, kept its deadline")
        #expect(!verdict(keeps, errors: [5], lost: 1), "a lost finish")
        #expect(!verdict(counts, errors: [600, 600], doubled: 1), "a doubled finish")
        let whilePaused = SuspendCommand.defaultScenarios[3]
        func pausedVerdict(_ p: CountdownProfile, errors: [Double]) -> Bool {
            SuspendExperiment.verdict(profile: p, scenario: whilePaused, tickMs: 200, durationMs: 2000, finishErrors: errors,
                                      afterContinue: errors, burst: 0, lost: 0, doubled: 0).0
        }
        #expect(pausedVerdict(keeps, errors: [0, 3]))
        #expect(!pausedVerdict(keeps, errors: [690, 700]), "paused, a deadline backend must not lose the freeze")
        #expect(!pausedVerdict(counts, errors: [-400, 0]), "paused, nobody finishes early")
        var wall = keeps
        wall.wallClockJump = .movesCountdown
        func clockVerdict(_ p: CountdownProfile, errors: [Double]) -> Bool {
            SuspendExperiment.clockVerdict(profile: p, jump: 3600, durationMs: 2000, after: 500, finishErrors: errors,
                                           tolerance: 500, unfinished: 0, doubled: 0).0
        }
        #expect(clockVerdict(keeps, errors: [0, 800]), "immune and late for its own reasons")
        #expect(!clockVerdict(keeps, errors: [-1400]), "declares itself immune, ended early")
        #expect(clockVerdict(wall, errors: [-1400]))
        #expect(!clockVerdict(wall, errors: [0, 2]), "declares it follows the wall clock, kept its deadline")

        // Notified of the lifecycle, a tick counter must keep its deadline too.
        let notified = SuspendCommand.lifecycleScenarios[0]
        func notifiedVerdict(_ p: CountdownProfile, errors: [Double], burst: Int = 2) -> Bool {
            SuspendExperiment.verdict(profile: p, scenario: notified, tickMs: 200, durationMs: 2000, finishErrors: errors,
                                      afterContinue: errors, burst: burst, lost: 0, doubled: 0).0
        }
        #expect(notifiedVerdict(counts, errors: [0, 2]), "the catch-up tick and the corrected one")
        #expect(!notifiedVerdict(counts, errors: [600, 640]), "notified, yet it lost the freeze")
        #expect(!notifiedVerdict(counts, errors: [0, 2], burst: 3), "a burst")
        var drifting = counts
        drifting.drift = .accumulates
        #expect(notifiedVerdict(drifting, errors: [1, 900]), "one on time: the rest late for the backend's own reasons")
        #expect(!notifiedVerdict(drifting, errors: [600, 900]), "every countdown late by the freeze")

        func killVerdict(_ p: CountdownProfile, errors: [Double], lost: Int = 0, doubled: Int = 0) -> Bool {
            SuspendExperiment.killVerdict(profile: p, tickMs: 200, finishErrors: errors, lost: lost, doubled: doubled).0
        }
        #expect(killVerdict(keeps, errors: [0, 150]))
        #expect(!killVerdict(keeps, errors: [0, 450]), "more than a tick after the original deadline")
        #expect(!killVerdict(keeps, errors: [-30, 0]), "early")
        #expect(!killVerdict(keeps, errors: [0], lost: 1), "lost")
        #expect(!killVerdict(keeps, errors: [0, 0], doubled: 1), "doubled")
        #expect(killVerdict(drifting, errors: [0, 900]), "late as it is without a kill")
        #expect(!killVerdict(drifting, errors: [0], lost: 1), "lost, whatever the drift")
    }
}

/// The worker's wall clock set an hour forward with libfaketime (installed by .ci/run; where it
/// is missing this suite is skipped, and says so). Not under ThreadSanitizer: libfaketime's
/// start-up recurses into ThreadSanitizer's clock_gettime and the worker never starts.
/// libfaketime arms monotonic timer deadlines its offset earlier, and the kernel refuses one
/// before the boot: the jump stays two minutes short of the time since boot, at most an hour.
@Test func theWallClockJumpStaysBelowTheTimeSinceBoot() {
    #expect(FakeTime.jump(upFor: .seconds(11 * 60 + 14)) == .seconds(9 * 60))
    #expect(FakeTime.jump(upFor: .seconds(3 * 60)) == .seconds(60))
    #expect(FakeTime.jump(upFor: .seconds(2 * 60 + 59)) == nil)
    #expect(FakeTime.jump(upFor: .seconds(62 * 60)) == .seconds(3600))
    #expect(FakeTime.jump(upFor: .seconds(40 * 3600)) == .seconds(3600))
    #expect(FakeTime.text(.seconds(3600)) == "+1 h" && FakeTime.text(.seconds(9 * 60)) == "+9 min")
    if let jump = FakeTime.jump() { #expect(jump.nanoseconds < Int64(SystemClocks.monotonic())) }
    // The plain build lets a thread read the real time while another re-reads the offset file.
    if let library = FakeTime.library { #expect(library.hasSuffix("/libfaketimeMT.so.1"), "\(library)") }
}

@Suite(.serialized, .dedicatedThread,
       .enabled(if: SuspendCommand.clockScenariosMissing == nil, "\(SuspendCommand.clockScenariosMissing ?? "")"),
       .enabled(if: ThreadSanitizer.acquire == nil, "libfaketime cannot start inside a ThreadSanitizer build"))
struct WallClockJumpTests {
    @Test(.runsAlone, .timeLimit(.minutes(2)), arguments: CountdownBackend.allWithVariants.map(\.description))
    func theWallClockSetForwardMovesOnlyWhatFollowsIt(_ name: String) throws {
        let backend = try #require(CountdownBackend.allWithVariants.first { $0.description == name })
        let declared = try backend.makeScheduler().profile.wallClockJump
        let result = try SuspendExperiment(
            backend: backend, scenario: SuspendCommand.clockScenarios(jump: try #require(FakeTime.jump()))[0], keys: 3, tick: SuspendCommand.tick,
            duration: SuspendCommand.duration
        ).run(executable: SuspendTests.executable)
        #expect(result.asDeclared, "\(name): \(result.verdict)")
        #expect(result.lostFinishes == 0 && result.doubledFinishes == 0)
        let earliest = try #require(result.finishErrorsMs.min())
        switch declared {
        case .movesCountdown: #expect(earliest < -750, "\(name) follows the wall clock: it ends well before its deadline")
        case .immune: #expect(earliest >= -50, "\(name) is immune: never early")
        }
    }
}
