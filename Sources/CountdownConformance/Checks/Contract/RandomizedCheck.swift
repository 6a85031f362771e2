import Countdown
import CountdownSupport
import Dispatch
import Foundation
import Synchronization

/// Random sequences of start / attach / cancel / pause / resume / query from several threads,
/// every answer and every delivered event checked against a model of the contract — not
/// against the backend itself.
///
/// Each key is driven by one thread only, so the model of that key is exact except for one
/// thing: when a countdown finishes. That is bounded below by the contract (never before
/// start + duration + the time provably spent paused), so the model only asserts what is
/// certain: before that bound a countdown is certainly still there; after it, either answer is
/// accepted. "Nothing after cancel or replace" is checked by ordering on the serial delivery
/// queue: a marker queued after the call returned runs after everything already queued, so a
/// callback that runs after the marker provably began after the call.
enum RandomizedCheck {
    static let check = ConformanceCheck(
        "randomized", .contract,
        "random operations on many keys from several threads, every event checked against a model of the contract",
        body: run)

    static let threads = 4
    static let tick = Duration.milliseconds(10)

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: tick)
        let s = h.scheduler
        let seed = c.options.seed
        let keysPerThread = max(1, min(4, (s.profile.capacity ?? 16) / threads))
        let operationsPerThread = max(1, c.options.randomizedOperations / threads)
        let maximum = s.profile.maximumDuration
        let collected = Locked<[KeyModel]>([])
        let started = SystemClocks.monotonic()

        onThreads(threads) { thread in
            var random = SplitMix(seed: seed &+ UInt64(thread) &* 0x9E37)
            let keys = (0..<keysPerThread).map { KeyModel(key: "r\(thread)-\($0)") }
            for _ in 0..<operationsPerThread {
                let model = keys[random.below(keys.count)]
                let duration = min(maximum, .milliseconds(10 + Int64(random.below(70))))
                model.perform(operation: random.below(100), duration: duration, on: h, in: c)
                // Paced (2 ms apart on average) so countdowns of 10–80 ms also run out
                // mid-sequence, not only get cancelled or replaced.
                Thread.sleep(forTimeInterval: Double(random.below(4000)) / 1e6)
            }
            collected.withLock { $0.append(contentsOf: keys) }
        }
        let elapsed = SystemClocks.monotonic() - started
        let callTime = collected.withLock { $0.reduce(0) { $0 + $1.callNanoseconds } }
        let keys = collected.withLock { $0 }

        // Let everything end: resume what is paused, then wait for every countdown to finish.
        for model in keys { model.resumeIfPaused(on: h, in: c) }
        c.expect(waitUntil(timeout: .seconds(30)) { s.activeCount == 0 },
                 "\(s.activeCount) countdowns still active 30 s after the last operation (seed \(seed))")
        // A key is free once its finish is decided, which the contract does not bound from its
        // delivery (a backend that keeps a store delivers it once the file is written): wait for
        // every finish owed, then a little for anything late, before judging.
        _ = waitUntil(timeout: .seconds(30)) { keys.allSatisfy { !$0.isAwaitingFinish } }
        settle(.milliseconds(50))
        h.queue.drain()

        var finishes = 0
        for model in keys { finishes += model.verify(in: c, seed: seed) }
        let operations = operationsPerThread * threads
        c.figure(String(format: "%d operations on %d keys from %d threads in %.2f s (paced; %.1f µs per call); %d countdowns, %d finishes; seed %llu",
                        operations, keys.count, threads, Double(elapsed) / 1e9, Double(callTime) / Double(operations) / 1000,
                        keys.reduce(0) { $0 + $1.countdownCount }, finishes, seed))
    }
}

/// One countdown as the model knows it.
private final class CountdownModel {
    let startBegin: UInt64
    let duration: Duration
    /// Lower bound of the time spent paused: from each pause's return to the resume's call.
    var pausedAtLeast: UInt64 = 0
    var pausedSince: UInt64?
    var frozenRemaining: Duration?
    /// Set when the model lost track of its timing (after an answer the contract forbids).
    var timingUnknown = false

    init(startBegin: UInt64, duration: Duration) {
        self.startBegin = startBegin
        self.duration = duration
    }

    var isPaused: Bool { pausedSince != nil }

    /// Never before this may it have finished.
    var earliestFinish: UInt64 { startBegin + nanoseconds(duration) + pausedAtLeast }

    /// For failure messages: where the model stood.
    func explain(at now: UInt64) -> String {
        let left = Int64(earliestFinish) - Int64(now)
        return "started \(DurationText.nanoseconds(Double(now - startBegin))) before for \(duration), paused at least \(DurationText.nanoseconds(Double(pausedAtLeast)))"
            + (isPaused ? ", paused now" : ", \(DurationText.nanoseconds(Double(left))) before its earliest finish")
    }

    /// Could it have finished by `now`? Only if running and past its earliest finish.
    func mayHaveFinished(at now: UInt64) -> Bool {
        timingUnknown || (!isPaused && now + granularity >= earliestFinish)
    }
}

/// One observer registration and what it must see.
private final class ObserverModel {
    let recorder: Recorder
    let countdown: CountdownModel?
    /// The first event it must receive, unless it was revoked first.
    let expectedFirst: Duration?
    /// Queued on the delivery queue after the call that replaced or cancelled it returned.
    var revokedBy: Marker?
    /// Registered by an attach to nothing: must hear nothing at all.
    let mustStaySilent: Bool

    init(recorder: Recorder, countdown: CountdownModel?, expectedFirst: Duration?, mustStaySilent: Bool = false) {
        self.recorder = recorder
        self.countdown = countdown
        self.expectedFirst = expectedFirst
        self.mustStaySilent = mustStaySilent
    }
}

/// One key: driven by one thread during the run, read by the check's thread after all threads
/// have returned. `@unchecked Sendable` for that hand-over.
private final class KeyModel: @unchecked Sendable {
    let key: String
    /// Bumped by the driving thread just before every `start` or `cancel` of the key: a
    /// callback that reads the same value before and after its queries knows no call that could
    /// create or remove a countdown under the key began in between.
    let epoch = Epoch()
    private var countdown: CountdownModel?
    private var current: ObserverModel?
    private var observers: [ObserverModel] = []
    private(set) var countdownCount = 0

    init(key: String) { self.key = key }

    /// Forgets a countdown whose finish its current observer has heard.
    private func noteFinish() {
        if let current, !current.recorder.finishes.isEmpty, current.countdown === countdown {
            countdown = nil
        }
    }

    private func register(_ observer: ObserverModel) {
        observers.append(observer)
        current = observer
    }

    private func revokeCurrent(_ h: Harness) {
        current?.revokedBy = h.queue.mark()
    }

    /// The recorder's observer, judging at each finish, from inside its own callback, that the
    /// key is free: `remaining(key:)` nil and the key gone from `activeKeys`. Judged only when
    /// no `start` or `cancel` of the key began since the observer was registered (`mine`) or
    /// while the queries ran.
    private func observer(_ recorder: Recorder, epoch mine: UInt64, on s: any CountdownScheduler, in c: CheckContext) -> CountdownObserver {
        let record = recorder.observer
        let key = key, epoch = epoch
        return { [weak s] event in
            record(event)
            guard event.kind == .finished, epoch.value == mine, let s else { return }
            let remaining = s.remaining(key: key)
            let listed = s.activeKeys.contains(key)
            guard epoch.value == mine else { return }
            c.expect(remaining == nil, "\(key): in its finish's own callback remaining(key:) was \(remaining.map { "\($0)" } ?? "nil"), not nil: the key must be free once the finish is delivered")
            c.expect(!listed, "\(key): in its finish's own callback activeKeys still listed the key")
        }
    }

    /// Time spent inside the scheduler's methods, for the figure.
    private(set) var callNanoseconds: UInt64 = 0

    func perform(operation: Int, duration: Duration, on h: Harness, in c: CheckContext) {
        noteFinish()
        let s = h.scheduler
        let begin = SystemClocks.monotonic()
        defer { callNanoseconds += SystemClocks.monotonic() - begin }
        // Whether the countdown certainly still exists is judged at the end of the call: the
        // backend decides somewhere inside it, and a call can take milliseconds on a loaded
        // machine. Before the end, the countdown was certainly there if it cannot have run out.
        let model = countdown
        var certain: Bool { model.map { !$0.mayHaveFinished(at: SystemClocks.monotonic()) } ?? false }
        var why: String { model.map { $0.explain(at: SystemClocks.monotonic()) } ?? "no countdown" }
        switch operation {
        case 0..<30:
            let recorder = h.recorder()
            let outcome: CountdownStart
            let mine = epoch.bump()
            do {
                outcome = try s.start(key: key, duration: duration, observer: observer(recorder, epoch: mine, on: s, in: c))
            } catch {
                c.fail("\(key): start(\(duration)) threw \(error)")
                return
            }
            switch outcome {
            case .started:
                c.expect(!certain, "\(key): start restarted a countdown that was still running (\(why))")
                let model = CountdownModel(startBegin: begin, duration: duration)
                countdown = model
                countdownCount += 1
                register(ObserverModel(recorder: recorder, countdown: model, expectedFirst: duration))
            case .attached(let remaining):
                if countdown == nil {
                    c.fail("\(key): start attached (\(remaining) left) though no countdown could be running")
                    let model = CountdownModel(startBegin: begin, duration: duration)
                    model.timingUnknown = true
                    countdown = model
                }
                revokeCurrent(h)
                register(ObserverModel(recorder: recorder, countdown: countdown,
                                       expectedFirst: remaining > .zero ? remaining : nil))
            }
        case 30..<40:
            let recorder = h.recorder()
            if let remaining = s.attach(key: key, observer: observer(recorder, epoch: epoch.value, on: s, in: c)) {
                if countdown == nil {
                    c.fail("\(key): attach found a countdown (\(remaining) left) though none could be running")
                    return
                }
                revokeCurrent(h)
                register(ObserverModel(recorder: recorder, countdown: countdown,
                                       expectedFirst: remaining > .zero ? remaining : nil))
            } else {
                c.expect(!certain, "\(key): attach found nothing though a countdown was running (\(why))")
                countdown = nil
                observers.append(ObserverModel(recorder: recorder, countdown: nil, expectedFirst: nil, mustStaySilent: true))
            }
        case 40..<55:
            epoch.bump()
            if s.cancel(key: key) {
                c.expect(countdown != nil, "\(key): cancel returned true though no countdown could be running")
                revokeCurrent(h)
            } else {
                c.expect(!certain, "\(key): cancel returned false though a countdown was running (\(why))")
            }
            countdown = nil
        case 55..<70:
            let paused = s.pause(key: key)
            let end = SystemClocks.monotonic()
            guard let model = countdown else {
                c.expect(!paused, "\(key): pause returned true with no countdown")
                return
            }
            if model.isPaused {
                c.expect(!paused, "\(key): pause of a paused countdown returned true")
            } else if paused {
                model.pausedSince = end
                model.frozenRemaining = nil
            } else {
                c.expect(!certain, "\(key): pause of a running countdown returned false (\(why))")
                countdown = nil  // it had finished
            }
        case 70..<85:
            let resumed = s.resume(key: key)
            guard let model = countdown else {
                c.expect(!resumed, "\(key): resume returned true with no countdown")
                return
            }
            if let since = model.pausedSince {
                if c.expect(resumed, "\(key): resume of a paused countdown returned false") {
                    model.pausedAtLeast += begin > since ? begin - since : 0
                    model.pausedSince = nil
                }
            } else {
                c.expect(!resumed, "\(key): resume of a running countdown returned true")
            }
        default:
            let remaining = s.remaining(key: key)
            guard let model = countdown else {
                c.expect(remaining == nil, "\(key): remaining is \(String(describing: remaining)) with no countdown")
                return
            }
            if model.isPaused {
                guard let remaining else {
                    c.fail("\(key): remaining is nil for a paused countdown")
                    return
                }
                if let frozen = model.frozenRemaining {
                    c.expect(remaining == frozen, "\(key): remaining moved while paused: \(frozen) then \(remaining)")
                }
                model.frozenRemaining = remaining
            } else if certain {
                c.expect(remaining.map { $0 <= model.duration } ?? false,
                         "\(key): remaining is \(String(describing: remaining)) for a running \(model.duration) countdown")
            }
        }
    }

    func resumeIfPaused(on h: Harness, in c: CheckContext) {
        noteFinish()
        guard let model = countdown, let since = model.pausedSince else { return }
        let begin = SystemClocks.monotonic()
        if c.expect(h.scheduler.resume(key: key), "\(key): resume of a paused countdown returned false") {
            model.pausedAtLeast += begin - since
            model.pausedSince = nil
        }
    }

    /// Whether an observer that was neither cancelled nor replaced has not heard its finish yet.
    var isAwaitingFinish: Bool {
        observers.contains { !$0.mustStaySilent && $0.revokedBy == nil && $0.recorder.finishes.isEmpty }
    }

    /// Checks every observer's events; returns how many finishes were heard.
    func verify(in c: CheckContext, seed: UInt64) -> Int {
        var finishes = 0
        for (index, observer) in observers.enumerated() {
            let label = "\(key) observer \(index) (seed \(seed))"
            let records = observer.recorder.all
            finishes += records.filter { $0.event.kind == .finished }.count
            if observer.mustStaySilent {
                c.expect(records.isEmpty, "\(label): attached to nothing, yet heard \(records.count) events")
                continue
            }
            EventRules.wellFormed(records, label, in: c)
            if let expected = observer.expectedFirst, observer.revokedBy == nil || !records.isEmpty {
                if let first = records.first {
                    c.expect(first.event == CountdownEvent(key: key, kind: .tick, remaining: expected),
                             "\(label): first event \(EventRules.describe(first.event)), expected tick(\(expected))")
                } else {
                    c.fail("\(label): never heard its first tick")
                }
            }
            if let marker = observer.revokedBy {
                let line = marker.sequence
                c.expect(line > 0, "\(label): the revocation marker never ran on the delivery queue")
                let late = records.filter { $0.sequence > line }
                c.expect(late.isEmpty, "\(label): \(late.count) events began after it was cancelled or replaced: \(late.map { EventRules.describe($0.event) })")
            } else {
                // Neither cancelled nor replaced: its countdown ran out, so it heard the finish.
                c.expect(records.filter { $0.event.kind == .finished }.count == 1,
                         "\(label): \(records.filter { $0.event.kind == .finished }.count) finishes for a countdown that ran out")
            }
            if let finish = records.first(where: { $0.event.kind == .finished }),
               let model = observer.countdown, !model.timingUnknown
            {
                c.expect(finish.at + granularity >= model.earliestFinish,
                         "\(label): finished \(DurationText.nanoseconds(Double(model.earliestFinish - finish.at))) before the deadline")
            }
        }
        return finishes
    }
}

/// A counter one thread bumps and any thread reads.
private final class Epoch: Sendable {
    private let counter = Atomic<UInt64>(0)

    /// Bumps the counter and returns its new value.
    @discardableResult
    func bump() -> UInt64 { counter.add(1, ordering: .sequentiallyConsistent).newValue }

    var value: UInt64 { counter.load(ordering: .sequentiallyConsistent) }
}
