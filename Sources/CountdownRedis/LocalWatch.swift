#if Redis
import Countdown
import CountdownSupport
import Dispatch
import Foundation

/// What one process knows of the fleet's countdowns whose observer it holds, and the thread that
/// times them: the ticks are computed here, where the observer is, from the shared deadline;
/// the deadline itself and the finish are the fleet's (Redis').
///
/// Decide, then act: every change is decided under one lock and leaves its events in an outbox,
/// in the order decided; the delivery queue drains the outbox. Nothing else (no Redis call, no
/// queue, no observer) is touched under the lock.
final class LocalWatch: Sendable {
    /// An observer attached here, with what ends it when it is not a finish (an event stream's
    /// end). Immutable: whether it still hears is decided by the table, not stored in it.
    final class Watch: Sendable {
        let observer: CountdownObserver
        let onEnd: (@Sendable () -> Void)?

        init(_ observer: @escaping CountdownObserver, onEnd: (@Sendable () -> Void)? = nil) {
            self.observer = observer
            self.onEnd = onEnd
        }
    }

    /// Where a countdown observed here stands.
    enum Phase: Sendable {
        /// Counting down to `deadline`, an instant of ``SystemClocks/monotonic()``.
        case running(deadline: Int64)
        /// Frozen with `remaining` nanoseconds left.
        case paused(remaining: Int64)
    }

    /// One countdown of the fleet, as observed here. `generation` names it fleet-wide: a new
    /// countdown under the same key is another generation.
    private struct Observed {
        let key: String
        let generation: Int64
        /// The token the server knows this observer by (`member/serial`), when it knows one.
        let owner: String?
        /// Its place among the countdown's observers, as the server saw them attach.
        let attachSerial: Int64?
        var watch: Watch
        let duration: Int64
        var phase: Phase
        /// Counts pauses: a tick decided before one is not delivered after it.
        var pauses: UInt64 = 0
        /// The least remaining time told so far: a tick never tells more.
        var leastTold: Int64
        /// The instant of the next tick filed in the heap; nil while paused or when no tick is left.
        var nextTick: Int64?
    }

    private enum Delivery {
        /// A tick, delivered only if the countdown is still observed by `watch` and has not been
        /// paused since (`pauses`).
        case tick(Watch, generation: Int64, pauses: UInt64, CountdownEvent)
        /// A finish: decided once, after the countdown left the table, so always delivered.
        case finish(Watch, CountdownEvent)
        /// The first tick of an observer replaced before it was observed: delivered as is.
        case told(Watch, CountdownEvent)
        /// The watch hears nothing more (cancelled, replaced, shut down): its stream ends.
        case end(Watch)
    }

    private struct State {
        var observed: [Int64: Observed] = [:]
        /// The generation observed under each key.
        var current: [String: Int64] = [:]
        var ticks = TickHeap()
        var outbox: [Delivery] = []
        var drainQueued = false
        /// When the claimer should next look for due finishes (`Int64.max`: nothing known).
        var claimAt: Int64 = .max
        var heartbeatAt: Int64 = 0
        /// The instant the timing thread sleeps until, so that only an earlier one wakes it.
        var sleepingUntil: Int64 = 0
        var stopped = false
        /// A decision filed something earlier than the thread sleeps until.
        var wakeThread = false
        /// Finishes claimed before the call that asked for them observed their countdown (a
        /// claim between a start's or attach's answer and its `observe`): delivered by that
        /// `observe`. The last few thousand; finishes for nobody (a stream that left) age out.
        var finishedEarly = Set<String>()
        /// The watches whose finish is decided and not yet delivered, with their pause count:
        /// a tick decided before the finish is still delivered before it.
        var finishing: [ObjectIdentifier: UInt64] = [:]
        var finishedEarlyOrder: [String] = []
    }

    /// How many early finishes are remembered.
    private static let finishedEarlyLimit = 4096

    let tick: Int64
    let queue: DispatchQueue
    /// How late a finish may be by design so that finishes due close together share a claim.
    let tolerance: Int64
    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)
    private let ended = DispatchSemaphore(value: 0)

    init(tick: Duration, tolerance: Duration, queue: DispatchQueue) {
        self.tick = tick.nanoseconds
        self.tolerance = tolerance.nanoseconds
        self.queue = queue
    }

    static func now() -> Int64 { Int64(SystemClocks.monotonic()) }

    // MARK: Decisions the backend reports

    /// Observes `generation` under `key` here with `watch`, replacing whatever this process
    /// observed under the key (which hears nothing more), and tells the watch `remaining`
    /// (nanoseconds) at once: the full duration for a start, what the server answered for an
    /// attach; no tick when it is zero (the finish is on its way). False, observing nothing,
    /// once shut down.
    @discardableResult
    func observe(
        key: String, generation: Int64, owner: String?, attachSerial: Int64?, duration: Int64, phase: Phase,
        told remaining: Int64, watch: Watch
    ) -> Bool {
        decide { s in
            guard !s.stopped else { return false }
            if let old = s.current[key], old == generation, let newer = s.observed[old]?.attachSerial,
               let attachSerial, newer > attachSerial {
                // Concurrent attaches answered out of order: this one was replaced by the one
                // already observed before it is observed. It hears its first tick, then nothing.
                if remaining > 0 { s.outbox.append(.told(watch, .init(key: key, kind: .tick, remaining: .nanoseconds(remaining)))) }
                s.outbox.append(.end(watch))
                return true
            }
            // Generations grow fleet-wide: an older one answered after a newer one was observed
            // under the key ended already (its finish or cancel is on its way) and replaces
            // nothing.
            let older = s.current[key].map { $0 > generation } ?? false
            if !older, let old = s.current[key] {
                // The same countdown: its observer is replaced. An older one ended in the server
                // (a newer start found the key free): one the server knows by its owner hears
                // its finish or cancel from the server, and waits for it; one it does not know
                // (keyspace) is let go.
                if old == generation || s.observed[old]?.owner == nil, let replaced = s.observed.removeValue(forKey: old) {
                    s.outbox.append(.end(replaced.watch))
                }
            }
            let now = Self.now()
            var entry = Observed(
                key: key, generation: generation, owner: owner, attachSerial: attachSerial, watch: watch, duration: duration,
                phase: phase, leastTold: remaining)
            if let owner, s.finishedEarly.remove(owner) != nil {
                // Claimed before this answer was observed: the first tick as told, then the finish.
                s.finishedEarlyOrder.removeAll { $0 == owner }
                if remaining > 0 { s.outbox.append(.told(watch, .init(key: key, kind: .tick, remaining: .nanoseconds(remaining)))) }
                s.outbox.append(.finish(watch, .init(key: key, kind: .finished, remaining: .zero)))
                if !older { s.current[key] = nil }
                return true
            }
            if remaining > 0 {
                s.outbox.append(.tick(watch, generation: generation, pauses: 0, .init(key: key, kind: .tick, remaining: .nanoseconds(remaining))))
            }
            fileNextTick(&entry, after: now, in: &s)
            s.observed[generation] = entry
            if !older { s.current[key] = generation }
            return true
        }
    }

    /// The countdown `generation` finished with `owner` as its observer: that observer hears the
    /// finish. One that attached after the claim hears it when it is observed (its `observe`
    /// may come after the claim's answer); an older observer here then hears nothing more.
    func finish(generation: Int64, owner: String) {
        decide { s in
            guard let entry = s.observed[generation], entry.owner == owner else {
                s.finishedEarly.insert(owner)
                s.finishedEarlyOrder.append(owner)
                if s.finishedEarlyOrder.count > Self.finishedEarlyLimit {
                    s.finishedEarly.remove(s.finishedEarlyOrder.removeFirst())
                }
                return
            }
            s.observed[generation] = nil
            if s.current[entry.key] == generation { s.current[entry.key] = nil }
            s.finishing[ObjectIdentifier(entry.watch)] = entry.pauses
            s.outbox.append(.finish(entry.watch, .init(key: entry.key, kind: .finished, remaining: .zero)))
        }
    }

    /// A keyspace notification said `key` expired: the countdown observed here under it finishes,
    /// unless its deadline is still more than `slack` ahead (the notification was about an
    /// earlier countdown under the same key, or a paused one: neither is this one's end).
    func finishExpired(key: String, slack: Int64) {
        decide { s in
            guard let generation = s.current[key], let entry = s.observed[generation],
                  case .running(let deadline) = entry.phase, deadline <= Self.now() + slack else { return }
            s.observed[generation] = nil
            s.current[key] = nil
            s.finishing[ObjectIdentifier(entry.watch)] = entry.pauses
            s.outbox.append(.finish(entry.watch, .init(key: key, kind: .finished, remaining: .zero)))
        }
    }

    /// The countdown `generation` is no longer observed here (cancelled anywhere, or an observer
    /// attached elsewhere): its watch hears nothing more.
    func end(generation: Int64) {
        decide { s in
            guard let entry = s.observed.removeValue(forKey: generation) else { return }
            if s.current[entry.key] == generation { s.current[entry.key] = nil }
            s.outbox.append(.end(entry.watch))
        }
    }

    /// Another member attached the `attachSerial`-th observer of `generation`: one here that
    /// attached before it hears nothing more (one that attached after it stays).
    func end(generation: Int64, attachedBefore attachSerial: Int64) {
        decide { s in
            guard let entry = s.observed[generation], (entry.attachSerial ?? 0) < attachSerial else { return }
            s.observed[generation] = nil
            if s.current[entry.key] == generation { s.current[entry.key] = nil }
            s.outbox.append(.end(entry.watch))
        }
    }

    /// Ends whatever is observed under `key` here: a cancel made in this process.
    func end(key: String) {
        decide { s in
            guard let generation = s.current.removeValue(forKey: key),
                  let entry = s.observed.removeValue(forKey: generation) else { return }
            s.outbox.append(.end(entry.watch))
        }
    }

    /// The countdown `generation` was paused with `remaining` left: no tick from here on, not
    /// even one already decided.
    func pause(generation: Int64, remaining: Int64) {
        decide { s in
            guard var entry = s.observed[generation] else { return }
            entry.phase = .paused(remaining: remaining)
            entry.pauses &+= 1
            entry.nextTick = nil
            s.observed[generation] = entry
        }
    }

    /// The countdown `generation` runs again, towards `deadline` (a monotonic instant).
    func resume(generation: Int64, deadline: Int64) {
        decide { s in
            guard var entry = s.observed[generation] else { return }
            entry.phase = .running(deadline: deadline)
            fileNextTick(&entry, after: Self.now(), in: &s)
            s.observed[generation] = entry
        }
    }

    /// The consumer of `watch` left: the countdown runs on, unobserved here.
    func detach(_ watch: Watch) {
        decide { s in
            guard let generation = s.observed.first(where: { $0.value.watch === watch })?.key,
                  let entry = s.observed.removeValue(forKey: generation) else { return }
            if s.current[entry.key] == generation { s.current[entry.key] = nil }
        }
    }

    /// The generation observed here under `key`, if any.
    func generation(of key: String) -> Int64? { state.withLock { $0.current[key] } }

    /// How many countdowns this process observes.
    var observedCount: Int { state.withLock { $0.observed.count } }

    /// Something is due at `instant`: the claimer looks then (or earlier, if it already would).
    func claim(at instant: Int64) {
        let wakeNow = state.withLock { s -> Bool in
            let at = instant > Int64.max - tolerance ? instant : instant + tolerance
            guard at < s.claimAt else { return false }
            s.claimAt = at
            return at < s.sleepingUntil
        }
        if wakeNow { wake.signal() }
    }

    /// Stops timing, ends every watch (their streams end) and lets the thread go. The outbox is
    /// still delivered: an end is how a stream hears of the shutdown.
    func shutdown() {
        let first = decide { s -> Bool in
            guard !s.stopped else { return false }
            s.stopped = true
            for entry in s.observed.values { s.outbox.append(.end(entry.watch)) }
            s.observed.removeAll()
            s.current.removeAll()
            s.ticks = TickHeap()
            return true
        }
        if first { wake.signal() }
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    // MARK: The timing thread

    /// What the thread runs when a claim is due; it returns when the next one is (nil: none
    /// known, look again at the next heartbeat).
    typealias Claimer = @Sendable () -> Int64?

    /// Starts the thread that delivers ticks, and with `claimer` also looks for due finishes at
    /// the earliest deadline and once a second (`heartbeat`).
    func startThread(name: String, heartbeat: Duration = .seconds(1), claimer: Claimer?) {
        let heartbeatNanoseconds = heartbeat.nanoseconds
        let thread = Thread { [self] in
            nameCurrentThread(name)
            run(heartbeat: heartbeatNanoseconds, claimer: claimer)
            ended.signal()
        }
        thread.start()
    }

    /// Waits until the thread has ended (after ``shutdown()``), at most `timeout`.
    func waitForThread(timeout: Duration) {
        let ok = ended.wait(timeout: .now() + .nanoseconds(Int(timeout.nanoseconds))) == .success
        if ok { ended.signal() }
    }

    private func run(heartbeat: Int64, claimer: Claimer?) {
        while true {
            let now = Self.now()
            let step = decide { s -> (stop: Bool, claim: Bool, sleep: Int64) in
                if s.stopped { return (true, false, 0) }
                while let top = s.ticks.peek(), top.instant <= now {
                    s.ticks.pop()
                    deliverTick(generation: top.generation, instant: top.instant, now: now, in: &s)
                }
                let claimDue = claimer != nil && (now >= s.claimAt || now >= s.heartbeatAt)
                if claimDue {
                    s.claimAt = .max
                    s.heartbeatAt = now + heartbeat
                }
                var until = s.ticks.peek()?.instant ?? .max
                if claimer != nil { until = min(until, s.claimAt, s.heartbeatAt) }
                s.sleepingUntil = claimDue ? 0 : until
                return (false, claimDue, until)
            }
            if step.stop { return }
            if step.claim, let claimer {
                if let next = claimer() { claim(at: next) }
                continue
            }
            if step.sleep == .max {
                wake.wait()
            } else if step.sleep > now {
                _ = wake.wait(timeout: DispatchTime(uptimeNanoseconds: UInt64(step.sleep)))
            }
        }
    }

    /// A tick of `generation` filed for `instant` is due: tell the remaining time and file the next.
    private func deliverTick(generation: Int64, instant: Int64, now: Int64, in s: inout State) {
        guard var entry = s.observed[generation], entry.nextTick == instant,
              case .running(let deadline) = entry.phase else { return }
        let remaining = min(deadline - now, entry.leastTold)
        if remaining > 0 {
            entry.leastTold = remaining
            s.outbox.append(.tick(entry.watch, generation: generation, pauses: entry.pauses,
                                  .init(key: entry.key, kind: .tick, remaining: .nanoseconds(remaining))))
        }
        fileNextTick(&entry, after: max(now, instant), in: &s)
        s.observed[generation] = entry
    }

    /// Files the next tick on the countdown's grid: the instants where the remaining time is
    /// duration − k·tick, k ≥ 1, before the deadline.
    private func fileNextTick(_ entry: inout Observed, after now: Int64, in s: inout State) {
        guard case .running(let deadline) = entry.phase else {
            entry.nextTick = nil
            return
        }
        let origin = deadline - entry.duration
        let elapsed = max(0, now - origin)
        let k = elapsed / tick + 1
        let (offset, overflow) = k.multipliedReportingOverflow(by: tick)
        let instant = origin + offset
        guard !overflow, instant < deadline else {
            entry.nextTick = nil
            return
        }
        entry.nextTick = instant
        s.ticks.push(instant: instant, generation: entry.generation)
        if instant < s.sleepingUntil {
            s.sleepingUntil = 0
            s.wakeThread = true
        }
    }

    // MARK: Deciding and delivering

    /// Runs `body` under the lock; afterwards queues a drain of the outbox when it is the first
    /// to fill it, and wakes the thread when an earlier tick was filed.
    @discardableResult
    private func decide<T>(_ body: (inout State) -> T) -> T {
        let (result, queueDrain, wakeThread) = state.withLock { s -> (T, Bool, Bool) in
            let result = body(&s)
            let queueDrain = !s.outbox.isEmpty && !s.drainQueued
            if queueDrain { s.drainQueued = true }
            defer { s.wakeThread = false }
            return (result, queueDrain, s.wakeThread)
        }
        if queueDrain { queue.async { self.drain() } }
        if wakeThread { wake.signal() }
        return result
    }

    /// On the delivery queue: everything decided so far, in the order decided; a tick only if
    /// its countdown is still observed by its watch and was not paused since.
    private func drain() {
        let batch = state.withLock { s -> [Delivery] in
            s.drainQueued = false
            defer { s.outbox = [] }
            return s.outbox
        }
        for delivery in batch {
            switch delivery {
            case .tick(let watch, let generation, let pauses, let event):
                let live = state.withLock { s in
                    if let finishing = s.finishing[ObjectIdentifier(watch)] { return finishing == pauses }
                    return s.observed[generation].map { $0.watch === watch && $0.pauses == pauses } ?? false
                }
                if live { watch.observer(event) }
            case .finish(let watch, let event):
                state.withLock { _ = $0.finishing.removeValue(forKey: ObjectIdentifier(watch)) }
                watch.observer(event)
                watch.onEnd?()
            case .told(let watch, let event):
                watch.observer(event)
            case .end(let watch):
                watch.onEnd?()
            }
        }
    }

}

/// A binary min-heap of tick instants; a popped entry is checked against the table (a stale
/// one, whose countdown was paused, ended or re-filed, is skipped).
struct TickHeap {
    private var items: [(instant: Int64, generation: Int64)] = []

    func peek() -> (instant: Int64, generation: Int64)? { items.first }

    mutating func push(instant: Int64, generation: Int64) {
        items.append((instant, generation))
        var child = items.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[child].instant < items[parent].instant else { break }
            items.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() {
        guard !items.isEmpty else { return }
        items.swapAt(0, items.count - 1)
        items.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var least = parent
            if left < items.count, items[left].instant < items[least].instant { least = left }
            if right < items.count, items[right].instant < items[least].instant { least = right }
            guard least != parent else { return }
            items.swapAt(parent, least)
            parent = least
        }
    }
}
#endif
