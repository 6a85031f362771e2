import CountdownSupport
import Countdown
import Dispatch
import Synchronization

/// Records the events of one run: for each countdown, when its start was called and which
/// ticks have arrived; for each event, its lateness against the ideal schedule,
/// start + k·T for tick k and start + D for the finish.
///
/// Which tick an event is: the k-th tick after the start, unless its remaining time says a
/// later one (the timestamp backend skips the grid points a stall made it miss, and its
/// remaining is read from a clock: D − remaining ≥ k·T). Counting alone would charge a skipped
/// tick's lateness to every later tick. Every grid point before the deadline is heard or
/// counted as skipped: between two ticks, or, at the finish, after the last tick heard.
///
/// `@unchecked Sendable` because the per-countdown arrays are plain buffers, so that a
/// record costs a clock read and a few stores: `begin` writes a countdown's start before its
/// `start` call (which hands its first event to the delivery queue, ordering the two); only
/// the serial delivery queue calls `record`; the summary is read after `close` and a sync
/// on that queue.
final class EventRecorder: @unchecked Sendable {
    let count: Int
    let tick: UInt64
    let duration: UInt64
    /// Grid points strictly before the deadline: the ticks each countdown should deliver.
    let ticksPerCountdown: Int

    private let starts: UnsafeMutableBufferPointer<UInt64>
    /// -1 before the first event, 0 after the tick at start, k after tick k.
    private let lastTick: UnsafeMutableBufferPointer<Int32>
    private let finished: UnsafeMutableBufferPointer<Bool>

    private(set) var tickLateness = LatencyHistogram()
    private(set) var finishError = LatencyHistogram()
    /// Lateness of tick 1: how late the countdown really began counting (the operation-queue
    /// backend's worker waiting for a pool thread).
    private(set) var startDelay = LatencyHistogram()
    private(set) var ticks = 0
    private(set) var skippedTicks = 0
    /// Ticks whose remaining named a grid point already ticked (see `record`).
    private(set) var repeatedGridPoints = 0
    /// Events before their ideal time (a contract breach), and the earliest, in ns.
    private(set) var earlyEvents = 0
    private(set) var earliest: Int64 = 0
    /// Of those, finishes: a wall-clock backend finishes early when the system clock is
    /// stepped forward (as its profile declares).
    private(set) var earlyFinishes = 0
    private(set) var doubledFinishes = 0
    private(set) var eventsAfterFinish = 0

    let finishedCount = Atomic<Int>(0)
    /// Every event recorded so far, so that the runner can count those of the steady state.
    let deliveredCount = Atomic<Int>(0)
    private let isOpen = Atomic<Bool>(true)
    /// Signalled when `finishedCount` reaches `expected`, so that the runner waits without polling.
    private let expected = Atomic<Int>(.max)
    private let allFinished = DispatchSemaphore(value: 0)

    init(count: Int, tick: Duration, duration: Duration) {
        self.count = count
        self.tick = UInt64(tick.nanoseconds)
        self.duration = UInt64(duration.nanoseconds)
        ticksPerCountdown = Int((self.duration - 1) / self.tick)
        starts = .allocate(capacity: count)
        starts.initialize(repeating: 0)
        lastTick = .allocate(capacity: count)
        lastTick.initialize(repeating: -1)
        finished = .allocate(capacity: count)
        finished.initialize(repeating: false)
    }

    deinit {
        starts.deallocate()
        lastTick.deallocate()
        finished.deallocate()
    }

    /// Called just before countdown `index`'s `start`: its ideal schedule begins at this call.
    /// `now`: the monotonic instant the caller read just before (the runner reads the clock
    /// once per start, for its pacing and for this).
    func begin(_ index: Int, at now: UInt64) -> UInt64 {
        starts[index] = now
        return now
    }

    /// Countdown `index`'s start threw: it has no schedule.
    func abandon(_ index: Int) { starts[index] = 0 }

    /// The observer of countdown `index`; on the delivery queue.
    func record(_ index: Int, _ event: CountdownEvent) {
        let now = SystemClocks.monotonic()
        guard isOpen.load(ordering: .relaxed) else { return }
        deliveredCount.add(1, ordering: .relaxed)
        let start = starts[index]
        guard !finished[index] else {
            if event.kind == .finished { doubledFinishes += 1 } else { eventsAfterFinish += 1 }
            return
        }
        switch event.kind {
        case .finished:
            finished[index] = true
            // The grid points after the last tick heard were skipped: a fire after a stall that
            // found the deadline passed delivers the finish alone (a tick never carries 0).
            skippedTicks += max(ticksPerCountdown - max(Int(lastTick[index]), 0), 0)
            if now < start + duration { earlyFinishes += 1 }
            finishError.record(lateness(now, ideal: start + duration))
            if finishedCount.add(1, ordering: .relaxed).newValue == expected.load(ordering: .relaxed) {
                allFinished.signal()
            }
        case .tick:
            let last = Int(lastTick[index])
            guard last >= 0 else {
                lastTick[index] = 0
                return
            }
            // Remaining says which grid point this tick is for (100 µs of slack: the backend's
            // clock was read a little after `begin`, and a backend that reads two clocks as one
            // instant may place its deadline up to 25 µs off its grid, half the 50 µs it lets
            // the readings lie apart; with 20 µs, such a tick heard a few µs after its grid
            // point was charged to the one before, a tick late), capped at the grid points
            // that have passed as the recorder sees it. A remaining that names a grid point
            // already ticked comes from a clock read delayed past the next grid point (a
            // preemption between the backend's two reads, under overload); its tick is charged
            // to that grid point again rather than forced one further, which would make the next
            // tick look early.
            // A tick k = last + 1 that comes before start + k·T stays visible as early.
            let elapsed = max(Int64(duration) - event.remaining.nanoseconds + 100_000, 0)
            let named = Int(UInt64(elapsed) / tick)
            let passed = now > start ? Int((now - start) / tick) : 0
            if named <= last && last > 0 {
                repeatedGridPoints += 1
                let late = lateness(now, ideal: start + UInt64(last) * tick)
                tickLateness.record(late)
                ticks += 1
                return
            }
            let k = max(last + 1, min(named, passed))
            skippedTicks += k - last - 1
            lastTick[index] = Int32(clamping: k)
            let late = lateness(now, ideal: start + UInt64(k) * tick)
            tickLateness.record(late)
            if k == 1 { startDelay.record(late) }
            ticks += 1
        }
    }

    private func lateness(_ now: UInt64, ideal: UInt64) -> UInt64 {
        if now >= ideal { return now - ideal }
        earlyEvents += 1
        earliest = min(earliest, Int64(now) - Int64(ideal))
        return 0
    }

    /// Waits until `started` countdowns have finished or the monotonic clock reaches `cutoff`;
    /// true if they all finished.
    func waitForFinishes(of started: Int, until cutoff: UInt64) -> Bool {
        expected.store(started, ordering: .relaxed)
        if finishedCount.load(ordering: .relaxed) >= started { return true }
        let now = SystemClocks.monotonic()
        guard cutoff > now else { return false }
        return allFinished.wait(timeout: .now() + .nanoseconds(Int(cutoff - now))) == .success
            || finishedCount.load(ordering: .relaxed) >= started
    }

    /// Ignores every later event. Call `censor` only once the delivery queue has run whatever
    /// `record` was under way.
    func close() { isOpen.store(false, ordering: .relaxed) }

    /// Counts, as lower bounds, every tick and finish that was due by `cutoff` and had not
    /// arrived: a backend that fell behind is charged for it.
    func censor(at cutoff: UInt64) {
        for index in 0..<count where starts[index] != 0 && !finished[index] {
            let start = starts[index]
            guard cutoff > start else { continue }
            let due = min(ticksPerCountdown, Int((cutoff - start) / tick))
            var k = max(Int(lastTick[index]), 0) + 1
            while k <= due {
                let missing = cutoff - (start + UInt64(k) * tick)
                tickLateness.recordCensored(atLeast: missing)
                if k == 1 { startDelay.recordCensored(atLeast: missing) }
                k += 1
            }
            if start + duration <= cutoff { finishError.recordCensored(atLeast: cutoff - start - duration) }
        }
    }

    var startedCount: Int { (0..<count).reduce(0) { $0 + (starts[$1] != 0 ? 1 : 0) } }

    /// Countdowns that started and never delivered tick 1 (or finished without one).
    var neverTicked: Int {
        (0..<count).reduce(0) { $0 + (starts[$1] != 0 && lastTick[$1] < 1 && !finished[$1] ? 1 : 0) }
    }
}
