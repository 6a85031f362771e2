import CountdownSupport
import Dispatch

/// The timestamp backend's one timer for every countdown: a ``DueQueue`` of due instants and a
/// dispatch timer armed for the earliest (plus the tolerance). A wake-up takes everything due,
/// hands it to the table as one batch under one acquisition of each lock, files again what
/// continues, re-arms once, and delivers what was decided.
///
/// The timer's handler runs on the delivery queue itself, so a wake-up is one thread woken,
/// not one for the timer and another for the delivery. A slow observer delays the wake-ups as
/// it delays every delivery, but no countdown loses time: remaining time is read from a clock,
/// and the wake-up after the stall skips the grid points it missed.
///
/// With a tolerance, the timer is armed for the earliest due instant plus the tolerance, and
/// the wake-up takes everything due by then: events come up to the tolerance late, never
/// early, and countdowns due within a tolerance of each other share one wake-up (Linux
/// libdispatch ignores a timer's leeway, so the ticker coalesces by itself).
///
/// In a stream of due instants that stays dense, wake-ups are held 50 µs apart (see
/// ``WakeUpPacing``): an instant due sooner after the last wake-up waits for the next one.
final class Ticker: Sendable {
    private struct State {
        var queue = DueQueue()
        /// What the timer is armed for: decided here, armed once the lock is released.
        var arming = TimerArming()
        weak var table: KeyedCountdowns<TimestampMechanism>?
        var isStopped = false
        /// The wake-ups' batch buffer, kept between wake-ups so that none allocates.
        var batch: [DueItem] = []
        /// How soon the timer may fire again.
        var pacing = WakeUpPacing()
    }

    /// In nanoseconds, converted once: a `Duration` is converted by an `Int128` division, and
    /// every start arms.
    private let tolerance: Int64
    private let state = Locked(State())
    private let timer: OwnedDispatchTimer

    /// - Parameter queue: the delivery queue, where wake-ups run.
    init(tolerance: Duration, queue: DispatchQueue) {
        self.tolerance = tolerance.nanoseconds
        let wakeUp = WeakTicker()
        timer = OwnedDispatchTimer(queue: queue) { wakeUp.ticker?.fireDue() }
        wakeUp.ticker = self
        timer.activate()
    }

    /// Lets the timer's handler reach the ticker without keeping it alive.
    private final class WeakTicker: @unchecked Sendable {
        // Written once, in `init`, before the timer can fire.
        weak var ticker: Ticker?
    }

    /// The table whose countdowns it drives; set once, before any countdown is armed.
    func bind(to table: KeyedCountdowns<TimestampMechanism>) {
        state.withLock { $0.table = table }
    }

    /// Called by the driver once the table's lock is released; takes only the ticker's own lock.
    func schedule(_ item: DueItem) {
        let arm = state.withLock { state in
            state.queue.insert(item)
            return armIfEarlier(item.due, &state)
        }
        if let arm { self.arm(arm) }
    }

    func stop() {
        state.withLock { $0.isStopped = true }
        timer.cancel()
    }

    private func armIfEarlier(_ due: MonotonicInstant, _ state: inout State) -> TimerArming.Arm? {
        guard !state.isStopped else { return nil }
        return state.arming.arm(ifEarlier: state.pacing.earliest(due.adding(nanoseconds: tolerance)))
    }

    /// Arms the timer with no lock held, again when a later decision was overwritten meanwhile.
    private func arm(_ arm: TimerArming.Arm) {
        var next: TimerArming.Arm? = arm
        while let arm = next {
            timer.schedule(at: arm.instant, repeating: nil)
            next = state.withLock { $0.arming.armed(arm) }
        }
    }

    private func fireDue() {
        let (batch, table) = state.withLock { state in
            state.arming.fired()
            var batch = state.batch
            state.batch = []
            let now = MonotonicInstant.now
            state.pacing.wokeUp(at: now)
            state.queue.popDue(at: now, into: &batch)
            return (batch, state.table)
        }
        guard let table else { return }
        var continuing = batch
        // The table's lock is taken once for the whole batch, never with the ticker's held.
        let decided = table.fire(&continuing)
        let arm = state.withLock { state -> TimerArming.Arm? in
            for item in continuing { state.queue.insert(item) }
            continuing.removeAll(keepingCapacity: true)
            state.batch = continuing
            guard let earliest = state.queue.earliest else { return nil }
            return armIfEarlier(earliest, &state)
        }
        if let arm { self.arm(arm) }
        guard decided else { return }
        // ThreadSanitizer on Linux does not order a dispatch source's handler with later blocks
        // on its target queue, so it would report the observers' own state (written here,
        // read after a sync on the queue) as racing. In a sanitized process the batch takes
        // the hop it would otherwise save; everything decided above stays under its eyes.
        if ThreadSanitizer.acquire != nil {
            table.deliverDecidedLater()
        } else {
            table.deliverDecided()
        }
    }
}
