import CountdownSupport
import Dispatch
import Foundation
import Testing

@testable import Countdown
@testable import CountdownBenchKit
@testable import CountdownConformance

/// What only one strategy has: its thread, its worker, its clock, its declared profile.
@Suite("Backends", .dedicatedThread, .timeLimit(.minutes(2)))
struct BackendTests {
    @Test("run-loop: shutdown ends the thread")
    func runLoopShutdownEndsThread() async throws {
        let scheduler = try RunLoopScheduler(tickInterval: .milliseconds(10))
        let log = recorder()
        try scheduler.start(key: "k", duration: .seconds(5), observer: log.observer)
        #expect(log.wait { $0.count >= 3 }, "the run loop never fired")
        #expect(scheduler.isThreadRunning)
        scheduler.shutdown()
        #expect(waitUntil { !scheduler.isThreadRunning }, "the run-loop thread is still running")
        let thread = scheduler.loopThread
        #expect(waitUntil { thread.isFinished }, "the Thread never finished")
    }

    @Test("run-loop: releasing the scheduler ends the thread")
    func runLoopReleaseEndsThread() async throws {
        var scheduler: RunLoopScheduler? = try RunLoopScheduler(tickInterval: .milliseconds(10))
        let thread = try #require(scheduler?.loopThread)
        let log = recorder()
        try scheduler?.start(key: "k", duration: .seconds(5), observer: log.observer)
        #expect(log.wait { $0.count >= 3 })
        weak let released = scheduler
        scheduler = nil
        #expect(released == nil, "something still holds the scheduler")
        #expect(waitUntil { !thread.isRunning && thread.isFinished }, "the thread outlived its scheduler")
        let count = log.count
        settle(.milliseconds(100))
        #expect(log.count == count, "ticks after the scheduler was released")
    }

    @Test("run-loop: no tick before the first interval (corelibs fires hand-added block timers at once)")
    func runLoopNoImmediateFire() async throws {
        let scheduler = try RunLoopScheduler(tickInterval: .seconds(1))
        defer { scheduler.shutdown() }
        let log = recorder()
        let before = SystemClocks.monotonic()
        try scheduler.start(key: "k", duration: .seconds(10), observer: log.observer)
        #expect(log.wait { $0.count >= 2 })
        let second = try #require(log.all.dropFirst().first)
        #expect(second.event.remaining == .seconds(9))
        #expect(second.at + ClockAllowance.process >= before + 1_000_000_000, "a tick came before the first interval")
    }

    @Test("operation-queue: the capacity is declared and enforced; attach still works at capacity")
    func operationQueueCapacity() async throws {
        let scheduler = try OperationQueueScheduler(tickInterval: .milliseconds(20), capacity: 2)
        defer { scheduler.shutdown() }
        #expect(scheduler.profile.capacity == 2)
        #expect(OperationQueueScheduler.defaultCapacity == 20)
        let a = recorder(), b = recorder(), refused = recorder(), reattached = recorder()
        try scheduler.start(key: "a", duration: .seconds(5), observer: a.observer)
        try scheduler.start(key: "b", duration: .seconds(5), observer: b.observer)
        #expect(throws: CountdownError.capacityExceeded(capacity: 2)) {
            try scheduler.start(key: "c", duration: .seconds(5), observer: refused.observer)
        }
        // An attach is not a new countdown.
        guard case .attached = try scheduler.start(key: "a", duration: .seconds(5), observer: reattached.observer)
        else {
            Issue.record("attach refused at capacity")
            return
        }
        #expect(Set(scheduler.activeKeys) == ["a", "b"])
        #expect(scheduler.cancel(key: "b"))
        #expect(try scheduler.start(key: "c", duration: .seconds(5), observer: refused.observer) == .started)
        #expect(refused.wait { $0.count >= 2 }, "the countdown started after a cancel never ticked")
        #expect(throws: CountdownError.invalidConfiguration("the capacity 0 is below one")) {
            _ = try OperationQueueScheduler(capacity: 0)
        }
    }

    @Test("operation-queue: cancel ends a worker in the middle of a long sleep")
    func operationQueueCancelIsPrompt() async throws {
        // A 10 s tick: a worker left to finish its sleep would linger for seconds.
        let scheduler = try OperationQueueScheduler(tickInterval: .seconds(10))
        defer { scheduler.shutdown() }
        let queue = scheduler.operationQueue
        try scheduler.start(key: "k", duration: .seconds(100)) { _ in }
        #expect(waitUntil { queue.operations.contains { $0.isExecuting } }, "the worker never started")
        settle(.milliseconds(50))  // let it reach its sleep
        #expect(scheduler.cancel(key: "k"))
        let cancelledAt = SystemClocks.monotonic()
        #expect(waitUntil(timeout: .seconds(5)) { queue.operationCount == 0 },
                "the worker was still running 5 s after cancel")
        #expect(SystemClocks.monotonic() - cancelledAt < 5_000_000_000)
    }

    @Test("operation-queue: pause parks the running worker, resume wakes it")
    func operationQueuePauseParksWorker() async throws {
        let scheduler = try OperationQueueScheduler(tickInterval: .seconds(10))
        defer { scheduler.shutdown() }
        let log = recorder()
        try scheduler.start(key: "k", duration: .seconds(100), observer: log.observer)
        let queue = scheduler.operationQueue
        #expect(waitUntil { queue.operations.contains { $0.isExecuting } })
        #expect(scheduler.pause(key: "k"))
        let frozen = try #require(scheduler.remaining(key: "k"))
        settle(.milliseconds(100))
        #expect(scheduler.remaining(key: "k") == frozen)
        // The same worker carries on: the queue never holds a second operation.
        #expect(scheduler.resume(key: "k"))
        #expect(queue.operationCount == 1)
        #expect(try #require(scheduler.remaining(key: "k")) <= frozen)
    }

    @Test("timestamp(wall): a clock set forward ends the countdown early; set back, it holds still")
    func wallClockJumps() async throws {
        let offset = Locked(Duration.zero)
        let clock = CountdownClock(name: "test-wall", followsWallClock: true) {
            CountdownClock.wall.now() + offset.withLock { $0 }
        }
        let scheduler = try TimestampScheduler(tickInterval: .milliseconds(20), clock: clock)
        defer { scheduler.shutdown() }
        #expect(scheduler.profile.wallClockJump == .movesCountdown)

        let forward = recorder(), back = recorder()
        try scheduler.start(key: "forward", duration: .seconds(3600), observer: forward.observer)
        #expect(forward.wait { $0.count >= 2 })
        offset.withLock { $0 = .seconds(3600) }
        #expect(forward.waitForFinish(timeout: .seconds(5)), "an hour's jump forward did not end it")
        expectWellFormed(forward.all, "forward")

        offset.withLock { $0 = .zero }
        try scheduler.start(key: "back", duration: .seconds(60), observer: back.observer)
        #expect(back.wait { $0.count >= 3 })
        offset.withLock { $0 = .seconds(-3600) }
        let countAtJump = back.count
        #expect(back.wait { $0.count >= countAtJump + 5 }, "ticks stopped after the jump back")
        expectWellFormed(back.all, "back")  // never counts up
        #expect(try #require(scheduler.remaining(key: "back")) <= .seconds(60))
        #expect(back.finishes.isEmpty)
    }

    @Test("timestamp(continuous): the wall clock is never read", arguments: [CountdownClock.continuous])
    func continuousClockIsImmune(clock: CountdownClock) throws {
        let scheduler = try TimestampScheduler(tickInterval: .milliseconds(20), clock: clock)
        defer { scheduler.shutdown() }
        #expect(scheduler.profile.wallClockJump == .immune)
        #expect(scheduler.profile.variant == "continuous")
        #expect(clock.followsWallClock == false)
    }

    /// What each strategy declares, by its name in the catalogue: a backend added to the
    /// catalogue without a line here fails `declaredProfiles`, which names it.
    typealias Declared = (
        suspension: CountdownProfile.Suspension, wallClock: CountdownProfile.WallClockJump,
        drift: CountdownProfile.Drift, capacity: Int?)
    static let declared: [String: Declared] = [
        "dispatch-source": (.finishesLateByFreeze, .immune, .bounded, nil),
        "dispatch-source(compensated)": (.keepsDeadline, .immune, .bounded, nil),
        "operation-queue": (.finishesLateByFreeze, .immune, .accumulates, 20),
        "run-loop": (.finishesLateByFreeze, .immune, .bounded, nil),
        "timestamp(wall)": (.keepsDeadline, .movesCountdown, .bounded, nil),
        "timestamp(continuous)": (.keepsDeadline, .immune, .bounded, nil),
        "timestamp(continuous~10ms)": (.keepsDeadline, .immune, .bounded, nil),
        "task": (.keepsDeadline, .immune, .bounded, nil),
    ]

    @Test("each backend declares the profile of its strategy")
    func declaredProfiles() throws {
        for backend in CountdownBackend.allWithVariants {
            let profile = try backend.makeScheduler().profile
            guard let declared = Self.declared[profile.displayName] else {
                Issue.record("BackendTests.declared has no line for \(profile.displayName): say what its strategy declares")
                continue
            }
            #expect(profile.displayName == backend.description)
            #expect(profile.suspension == declared.suspension, "\(backend)")
            #expect(profile.wallClockJump == declared.wallClock, "\(backend)")
            #expect(profile.drift == declared.drift, "\(backend)")
            #expect(profile.capacity == declared.capacity, "\(backend)")
        }
        #expect(CountdownBackend.all.map(\.description) == [
            "dispatch-source", "operation-queue", "run-loop", "timestamp(wall)", "timestamp(continuous)", "task",
        ])
        let profiles = try CountdownBackend.all.map { try $0.makeScheduler().profile }
        #expect(profiles[1].maximumDuration == .seconds(120))
        #expect(CountdownBackend.named("timestamp").map(\.description) == ["timestamp(wall)", "timestamp(continuous)", "timestamp(continuous~10ms)"])
        #expect(CountdownBackend.named("run-loop").count == 1)
        #expect(CountdownBackend.named("task").map(\.description) == ["task"])
        // Company is chosen by its full name only: `task` and `all` judge the backend alone.
        #expect(CountdownBackend.named("task(beside-20-sleepers)").map(\.description) == ["task(beside-20-sleepers)"])
        #expect(CountdownBackend.named("timestamp(continuous+beside-20-sleepers)").count == 1)
        #expect(try CountdownBackend.select("all").allSatisfy { !$0.description.contains("sleepers") })
        #expect(CountdownBackend.named("dispatch-source").map(\.description) == ["dispatch-source", "dispatch-source(compensated)"])
        #expect(CountdownBackend.named("nope").isEmpty)
    }

    /// Declared only: made, its 20 sleeping workers would starve the pool of every test running
    /// beside it (what the benchmark measures with it).
    @Test("beside sleepers: the backend's profile, saying who shares its pool")
    func besideSleepers() throws {
        let profile = try CountdownBackend.besideSleepers(.task).profile(.init(tickInterval: .milliseconds(20)))
        #expect(profile.displayName == "task(beside-20-sleepers)")
        #expect(profile.suspension == .keepsDeadline && profile.drift == .bounded)
        #expect(profile.threads.hasSuffix("beside 20 sleeping operation-queue workers, each blocking a pool thread"))
        let timestamp = try CountdownBackend.besideSleepers(.timestamp(.continuous)).profile()
        #expect(timestamp.displayName == "timestamp(continuous+beside-20-sleepers)")
    }

    @Test("the catalogue declares each profile without making a scheduler, as the scheduler would")
    func declaredWithoutAScheduler() throws {
        for backend in CountdownBackend.allWithVariants {
            for options in [CountdownBackend.Options(), .init(tickInterval: .milliseconds(10), capacity: 7, maximumDuration: .seconds(60))] {
                let scheduler = try backend.makeScheduler(options)
                defer { scheduler.shutdown() }
                #expect(try backend.profile(options) == scheduler.profile, "\(backend)")
            }
        }
    }
}
