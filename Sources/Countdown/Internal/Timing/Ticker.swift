import CountdownSupport
import Dispatch
import Foundation

/// The timestamp backend's one timer for every countdown: a ``DueQueue`` of due instants and a
/// thread of its own that sleeps until the earliest (plus the tolerance). A wake-up takes
/// everything due, hands it to the table as one batch under one acquisition of each lock,
/// files again what continues, decides the next wake-up, and delivers what was decided.
///
/// The thread runs each wake-up on the delivery queue with `sync`, which libdispatch runs on
/// the calling thread when the queue is idle: a wake-up is one thread woken. A dispatch timer
/// targeting the queue costs two on Linux: libdispatch's manager thread wakes for the timer,
/// then wakes a worker for the queue (measured here: about 20 µs of CPU each; at a million
/// countdowns, switching threads was 41 % of the delivery side's time). With the main queue as
/// the delivery queue, the thread waits for the main thread to run the wake-up, as a timer's
/// handler would.
///
/// A slow observer delays the wake-ups as it delays every delivery, but no countdown loses
/// time: remaining time is read from a clock, and the wake-up after the stall skips the grid
/// points it missed.
///
/// With a tolerance, the thread sleeps until the earliest due instant plus the tolerance, and
/// the wake-up takes everything due by then: events come up to the tolerance late, never
/// early, and countdowns due within a tolerance of each other share one wake-up.
///
/// In a stream of due instants that stays dense, wake-ups are held 50 µs apart (see
/// ``WakeUpPacing``): an instant due sooner after the last wake-up waits for the next one.
final class Ticker: Sendable {
    private struct State {
        var queue = DueQueue()
        /// What the thread sleeps until: decided here, read by the thread under this lock.
        var arming = TimerArming()
        weak var table: CountdownEngine<TimestampMechanism>?
        var isStopped = false
        /// The wake-ups' batch buffer, kept between wake-ups so that none allocates.
        var batch: [DueItem] = []
        /// How soon the thread may wake up again.
        var pacing = WakeUpPacing()
    }

    /// At most 15 characters: Linux refuses longer thread names.
    static let threadName = "countdown-tick"

    /// In nanoseconds, converted once: a `Duration` is converted by an `Int128` division, and
    /// every start arms.
    private let tolerance: Int64
    /// Where its clock comes from, and who runs its wake-ups: its own thread in the system's
    /// world; in virtual time, ``VirtualScheduler/advance(by:)``, which moves the clock to
    /// ``armedFor`` and runs ``fireDue()`` as the thread would.
    private let runtime: EngineRuntime
    private let state = Locked(State())
    /// Wakes the thread before its time: a decision for an earlier instant, or the stop.
    private let wakeUp = DispatchSemaphore(value: 0)

    /// - Parameter runtime: its world; its delivery queue is where wake-ups run.
    init(tolerance: Duration, runtime: EngineRuntime) {
        self.tolerance = tolerance.nanoseconds
        self.runtime = runtime
        guard case .system = runtime.world else { return }
        let queue = runtime.deliveryQueue
        let ticker = WeakBox<Ticker>()
        ticker.set(self)
        // The thread holds the ticker weakly, and strongly only while it decides or fires: a
        // scheduler released without a shutdown takes its ticker with it, whose `deinit` wakes
        // the thread to end.
        let wakeUp = self.wakeUp
        Thread { Self.run(ticker, wakeUp: wakeUp, queue: queue) }.start()
    }

    deinit { wakeUp.signal() }

    private enum Step {
        case sleep(until: MonotonicInstant?)
        case fire
        case end
    }

    private static func run(_ ticker: WeakBox<Ticker>, wakeUp: DispatchSemaphore, queue: DispatchQueue) {
        // Named from inside, through pthread: corelibs ignores a name set before `start()`.
        nameCurrentThread(threadName)
        // One work item for every wake-up, made once: `sync` with a closure goes through the
        // overlay's generic helper, which allocates and looks up generic metadata on every
        // call (about 2 500 instructions a wake-up in callgrind's profile, and as many cold
        // cache lines after a sleep); a work item's block is made once and run each time.
        let fire = DispatchWorkItem { ticker.value?.fireDue() }
        while true {
            guard let step = ticker.value?.nextStep() else { return }
            switch step {
            case .sleep(let instant?): _ = wakeUp.wait(timeout: instant.dispatchTime)
            case .sleep(nil): wakeUp.wait()
            case .fire: queue.sync(execute: fire)
            case .end: return
            }
        }
    }

    /// What the thread does next, decided under the lock.
    private func nextStep() -> Step {
        state.withLock { state in
            guard !state.isStopped else { return .end }
            guard let armed = state.arming.armedFor else { return .sleep(until: nil) }
            return runtime.monotonicInstant() < armed ? .sleep(until: armed) : .fire
        }
    }

    /// The table whose countdowns it drives; set once, before any countdown is armed.
    func bind(to table: CountdownEngine<TimestampMechanism>) {
        state.withLock { $0.table = table }
    }

    /// Files due items, the earliest deciding whether the thread wakes sooner: called by the
    /// engine once the table's lock is released, or by a drain with the arms it took. Takes
    /// only the ticker's own lock, once however many items.
    func schedule(_ items: some Sequence<DueItem>) {
        let earlier = state.withLock { state in
            var earliest: MonotonicInstant?
            for item in items {
                state.queue.insert(item)
                if earliest.map({ item.due < $0 }) ?? true { earliest = item.due }
            }
            return earliest.map { armIfEarlier($0, &state) } ?? false
        }
        // After the lock: the thread wakes and reads the new decision under it.
        if earlier { wakeUp.signal() }
    }

    /// Ends the thread: at once if it sleeps, after the wake-up under way if one runs (it may
    /// wait for the delivery queue, so `stop` does not wait for it: an observer may call it).
    func stop() {
        state.withLock { $0.isStopped = true }
        wakeUp.signal()
    }

    private func armIfEarlier(_ due: MonotonicInstant, _ state: inout State) -> Bool {
        guard !state.isStopped else { return false }
        return state.arming.arm(ifEarlier: state.pacing.earliest(due.adding(nanoseconds: tolerance)))
    }

    /// The instant the thread sleeps until: nil when nothing is due, or once stopped.
    var armedFor: MonotonicInstant? {
        state.withLock { $0.isStopped ? nil : $0.arming.armedFor }
    }

    /// One wake-up, on the delivery queue: run by the thread, or by virtual time's `advance`
    /// once it moved the clock to ``armedFor``.
    func fireDue() {
        let (batch, table) = state.withLock { state in
            state.arming.fired()
            var batch = state.batch
            state.batch = []
            let now = runtime.monotonicInstant()
            state.pacing.wokeUp(at: now)
            state.queue.popDue(at: now, into: &batch)
            return (batch, state.table)
        }
        guard let table else { return }
        var continuing = batch
        // The table's lock is taken once per 256 fires of the batch (`fire`), never with the
        // ticker's held.
        let decided = table.fire(&continuing)
        state.withLock { state in
            for item in continuing { state.queue.insert(item) }
            continuing.removeAll(keepingCapacity: true)
            state.batch = continuing
            // The thread reads this decision when the wake-up returns: no signal needed.
            if let earliest = state.queue.earliest { _ = armIfEarlier(earliest, &state) }
        }
        guard decided else { return }
        table.deliverDecided()
    }
}
