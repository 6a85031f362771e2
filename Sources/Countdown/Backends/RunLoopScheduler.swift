import CountdownSupport
import Dispatch
import Foundation

/// Strategy 3: one dedicated `Thread` running its own `RunLoop`, one repeating `Timer` per
/// countdown in `.common` mode (so it would not stall while a main run loop tracks a scroll);
/// each fire takes one tick off the counter.
///
/// One thread in all, whatever the number of countdowns; corelibs keeps the timers in a sorted
/// array, so each fire costs a re-insert that grows with the count. Counting fires, it finishes
/// late by a freeze; timers are scheduled on the monotonic clock, so the wall clock never moves
/// it. Timers capture the scheduler weakly (no leak), and the thread ends on ``CountdownScheduler/shutdown()``.
public final class RunLoopScheduler: KeyedCountdownScheduler, EngineBacked, Sendable {
    public let profile: CountdownProfile
    let engine: CountdownEngine<RunLoopMechanism>

    /// A scheduler with one thread of its own running a `RunLoop`, one repeating `Timer` per countdown.
    ///
    /// - Parameters:
    ///   - tickInterval: `T`, how often a running countdown ticks, at least ``CountdownLimits/minimumTickInterval``.
    ///   - maximumDuration: the longest countdown `start` accepts; a longer one throws.
    ///   - deliveryQueue: the serial queue every observer runs on (the main queue for an app's UI); nil: a queue of its own.
    /// - Throws: ``CountdownError`` for a tick interval or maximum duration out of range.
    public init(
        tickInterval: Duration = .seconds(1),
        maximumDuration: Duration = CountdownLimits.defaultMaximumDuration,
        deliveryQueue: DispatchQueue? = nil
    ) throws(CountdownError) {
        let settings = try SchedulerSettings(
            tickInterval: tickInterval, maximumDuration: maximumDuration, capacity: nil,
            deliveryQueue: deliveryQueue, label: "countdown.run-loop")
        engine = CountdownEngine(
            settings: settings, mechanism: RunLoopMechanism(tick: tickInterval, thread: RunLoopThread()))
        profile = Self.profile(maximumDuration: maximumDuration)
    }

    deinit { engine.shutdown() }

    /// What a scheduler made with these arguments declares, without making one: `maximumDuration` as its initializer takes it.
    public static func profile(maximumDuration: Duration = CountdownLimits.defaultMaximumDuration) -> CountdownProfile {
        CountdownProfile(
            name: "run-loop",
            mechanism: "one Thread running its own RunLoop; one repeating Timer per countdown in .common mode; counts fires",
            threads: "one dedicated thread, whatever the count",
            suspension: .finishesLateByFreeze,
            wallClockJump: .immune,
            capacity: nil,
            maximumDuration: maximumDuration)
    }

    /// Whether the scheduler's run-loop thread is still running: false once shut down.
    package var isThreadRunning: Bool { loopThread.isRunning }

    var loopThread: RunLoopThread { engine.mechanism.thread }
}

struct RunLoopMechanism: CountdownMechanism {
    let tick: Duration
    let thread: RunLoopThread

    /// `@unchecked Sendable`: see ``RunLoopThread``; only invalidated and re-dated, through
    /// CFRunLoopTimer calls that lock.
    final class TimerHandle: @unchecked Sendable {
        let timer: Timer
        init(_ timer: Timer) { self.timer = timer }
    }

    typealias Progress = TickCount

    /// The run loop's own shutdown takes every timer down at once: a shutdown is spared N
    /// invalidations, each O(N) in the run loop.
    var arming: ArmingStyle { .timerPerCountdown(shutdown: .allAtOnce) }

    func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant, engine: CountdownEngine<Self>) -> TimerHandle {
        // `Timer(fire:…)`, not `Timer(timeInterval:repeats:block:)`: corelibs gives the latter a
        // fire date of now, so added by hand it fires once at once, which would count a tick.
        let timer = Timer(
            fire: Self.date(of: firstFire), interval: tick.seconds, repeats: true
        ) { [weak engine] _ in
            _ = engine?.fire(id)
        }
        thread.add(timer)
        return TimerHandle(timer)
    }

    func disarm(_ handle: TimerHandle) { handle.timer.invalidate() }

    func shorten(_ handle: TimerHandle, nextFire: MonotonicInstant) {
        handle.timer.fireDate = Self.date(of: nextFire)
    }

    func shutdown() { thread.stop() }

    /// Removing a timer from a CFRunLoop is O(N) (a linear search of a sorted array): N
    /// invalidations took about 12 s at N = 100 000 on a 2-core Linux VM. The stopped loop's thread ends and
    /// its timers go with it; until then a fire finds its countdown gone and does nothing.
    /// CFRunLoop takes a `Date` and converts it to its monotonic clock at once, so a later
    /// change of the wall clock does not move the timer.
    private static func date(of instant: MonotonicInstant) -> Date {
        Date(timeIntervalSinceNow: (instant - .now).seconds)
    }
}
