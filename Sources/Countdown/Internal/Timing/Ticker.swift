import CountdownSupport
import Dispatch
import Foundation

/// The timestamp backend's one timer for every countdown: a ``DueQueue`` of due instants, and
/// the runtime's wake-up timer (``WakeUpTimer``), which sleeps until the earliest (plus the
/// tolerance) on a thread of its own, or, in virtual time, waits for `advance`. A wake-up takes
/// everything due, hands it to the engine as one batch (its lock taken once per 256 fires),
/// files again what continues, decides the next wake-up, and delivers what was decided.
///
/// A slow observer delays the wake-ups as it delays every delivery, but no countdown loses
/// time: remaining time is read from a clock, and the wake-up after the stall skips the grid
/// points it missed.
///
/// With a tolerance, the timer sleeps until the earliest due instant plus the tolerance, and
/// the wake-up takes everything due by then: events come up to the tolerance late, never
/// early, and countdowns due within a tolerance of each other share one wake-up.
///
/// In a stream of due instants that stays dense, wake-ups are held 50 µs apart (see
/// ``WakeUpPacing``): an instant due sooner after the last wake-up waits for the next one.
final class Ticker: WakeUpTarget {
    private struct State {
        var queue = DueQueue()
        /// When the timer wakes up next: decided here, read by the timer under this lock.
        var next = NextWakeUp()
        weak var engine: CountdownEngine<TimestampMechanism>?
        var isStopped = false
        /// The wake-ups' batch buffer, kept between wake-ups so that none allocates.
        var batch: [DueItem] = []
        /// How soon the timer may wake up again.
        var pacing = WakeUpPacing()
    }

    /// At most 15 characters: Linux refuses longer thread names.
    static let threadName = "countdown-tick"

    /// In nanoseconds, converted once: a `Duration` is converted by an `Int128` division, and
    /// every start arms.
    private let tolerance: Int64
    /// Where its clock and its timer come from: the system's, or a virtual world's.
    private let runtime: EngineRuntime
    private let state = Locked(State())
    private let timer: WakeUpTimer

    init(tolerance: Duration, runtime: EngineRuntime) {
        self.tolerance = tolerance.nanoseconds
        self.runtime = runtime
        timer = runtime.makeWakeUpTimer()
        runtime.startWakeUps(timer, for: self, named: Self.threadName)
    }

    deinit { timer.nudge() }

    /// When the timer wakes it next, read under the lock.
    var nextWakeUp: WakeUpRequest {
        state.withLock { state in
            guard !state.isStopped else { return .stopped }
            return state.next.instant.map { .at($0) } ?? .idle
        }
    }

    /// The engine whose countdowns it drives; set once, before any countdown is armed.
    func bind(to engine: CountdownEngine<TimestampMechanism>) {
        state.withLock { $0.engine = engine }
    }

    /// Files due items, the earliest deciding whether the timer wakes sooner: called by the
    /// drain with the first fires it took. Takes only the ticker's own lock, once however many
    /// items.
    func schedule(_ items: some Sequence<DueItem>) {
        let earlier = state.withLock { state in
            var earliest: MonotonicInstant?
            for item in items {
                state.queue.insert(item)
                if earliest.map({ item.due < $0 }) ?? true { earliest = item.due }
            }
            return earliest.map { wakeEarlier($0, &state) } ?? false
        }
        // After the lock: the timer looks again and reads the new decision under it.
        if earlier { timer.nudge() }
    }

    /// Ends the timer: at once if it sleeps, after the wake-up under way if one runs (it may
    /// wait for the delivery queue, so `stop` does not wait for it: an observer may call it).
    func stop() {
        state.withLock { $0.isStopped = true }
        timer.nudge()
    }

    private func wakeEarlier(_ due: MonotonicInstant, _ state: inout State) -> Bool {
        guard !state.isStopped else { return false }
        return state.next.moveEarlier(to: state.pacing.earliest(due.adding(nanoseconds: tolerance)))
    }

    /// One wake-up, on the delivery queue: run by the timer's thread, or by virtual time's
    /// `advance` once it moved the clock to ``nextWakeUp``.
    func wakeUp() {
        let (batch, engine) = state.withLock { state in
            state.next.woke()
            var batch = state.batch
            state.batch = []
            let now = runtime.monotonicInstant()
            state.pacing.wokeUp(at: now)
            state.queue.popDue(at: now, into: &batch)
            return (batch, state.engine)
        }
        guard let engine else { return }
        var continuing = batch
        // The engine's lock is taken once per 256 fires of the batch (`fire`), never with the
        // ticker's held.
        let decided = engine.fire(&continuing)
        state.withLock { state in
            for item in continuing { state.queue.insert(item) }
            continuing.removeAll(keepingCapacity: true)
            state.batch = continuing
            // The timer reads this decision when the wake-up returns: no nudge needed.
            if let earliest = state.queue.earliest { _ = wakeEarlier(earliest, &state) }
        }
        guard decided else { return }
        engine.deliverDecided()
    }
}
