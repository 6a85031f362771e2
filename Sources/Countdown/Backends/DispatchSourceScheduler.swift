import Dispatch

/// Strategy 1: one `DispatchSourceTimer` per countdown, repeating every tick; each handler
/// call takes one tick off the counter, as the articles built it.
///
/// Timers live in libdispatch's timer heap: no thread per countdown. Because it counts calls,
/// a process frozen for S seconds finishes S late (libdispatch coalesces the missed intervals
/// into one call), and the wall clock never moves it.
public final class DispatchSourceScheduler: KeyedCountdownScheduler, EngineBacked, Sendable {
    public let profile: CountdownProfile
    let engine: CountdownEngine<DispatchSourceMechanism>

    /// - Parameters:
    ///   - tickInterval: `T`, at least ``CountdownLimits/minimumTickInterval``.
    ///   - maximumDuration: the longest countdown accepted.
    ///   - deliveryQueue: the serial queue observers run on (the main queue in an app);
    ///     a private one by default.
    ///   - compensatesMissedTicks: take off as many ticks as the timer says intervals passed
    ///     (libdispatch's missed-interval count, the source's `data`) instead of one per call,
    ///     so a frozen process finishes on its original deadline. Off by default: the
    ///     articles' counter, which loses the frozen time.
    public init(
        tickInterval: Duration = .seconds(1),
        maximumDuration: Duration = CountdownLimits.defaultMaximumDuration,
        deliveryQueue: DispatchQueue? = nil,
        compensatesMissedTicks: Bool = false
    ) throws(CountdownError) {
        let settings = try SchedulerSettings(
            tickInterval: tickInterval, maximumDuration: maximumDuration, capacity: nil,
            deliveryQueue: deliveryQueue, label: "countdown.dispatch-source")
        engine = CountdownEngine(
            settings: settings,
            mechanism: DispatchSourceMechanism(
                tick: tickInterval, timerQueue: DispatchQueue(label: "countdown.dispatch-source.timers"),
                compensatesMissedTicks: compensatesMissedTicks))
        profile = Self.profile(maximumDuration: maximumDuration, compensatesMissedTicks: compensatesMissedTicks)
    }

    deinit { engine.shutdown() }

    /// What a scheduler made with these arguments declares, without making one: `maximumDuration`, `compensatesMissedTicks` as its initializer takes them.
    public static func profile(
        maximumDuration: Duration = CountdownLimits.defaultMaximumDuration, compensatesMissedTicks: Bool = false
    ) -> CountdownProfile {
        CountdownProfile(
            name: "dispatch-source",
            variant: compensatesMissedTicks ? "compensated" : nil,
            mechanism: compensatesMissedTicks
                ? "one DispatchSourceTimer per countdown, repeating every tick; counts the intervals each handler call reports"
                : "one DispatchSourceTimer per countdown, repeating every tick; counts handler calls",
            threads: "none of its own: libdispatch's timer heap and one serial handler queue",
            suspension: compensatesMissedTicks ? .keepsDeadline : .finishesLateByFreeze,
            wallClockJump: .immune,
            capacity: nil,
            maximumDuration: maximumDuration)
    }
}

struct DispatchSourceMechanism: CountdownMechanism {
    let tick: Duration
    /// One serial queue for every timer's handler: handlers only take the table's lock and
    /// queue a delivery, so a slow observer never delays the counting.
    let timerQueue: DispatchQueue
    let compensatesMissedTicks: Bool

    typealias Progress = TickCount

    var arming: ArmingStyle { .timerPerCountdown(shutdown: .disarmEach) }

    func arm(_ id: CountdownID, key: String, firstFire: MonotonicInstant,
             engine: CountdownEngine<Self>) -> OwnedDispatchTimer {
        let timer = compensatesMissedTicks
            ? OwnedDispatchTimer(queue: timerQueue, countingHandler: { [weak engine] intervals in
                _ = engine?.fire(id, intervals: intervals)
            })
            : OwnedDispatchTimer(queue: timerQueue) { [weak engine] in _ = engine?.fire(id) }
        timer.schedule(at: firstFire, repeating: tick)
        timer.activate()
        return timer
    }

    func disarm(_ timer: OwnedDispatchTimer) { timer.cancel() }

    func shorten(_ timer: OwnedDispatchTimer, nextFire: MonotonicInstant) {
        timer.schedule(at: nextFire, repeating: tick)
    }
}
