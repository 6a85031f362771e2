import Countdown
import CountdownSupport
import Dispatch
import Foundation
import Synchronization

// The model of the contract the randomized check judges every answer and event against: in
// real time with several threads, and in virtual time as a seeded simulation.

/// One observer registration and what it must see.
final class ObserverModel {
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
final class KeyModel: @unchecked Sendable {
    let key: String
    /// Bumped by the driving thread just before every `start` or `cancel` of the key: a
    /// callback that reads the same value before and after its queries knows no call that could
    /// create or remove a countdown under the key began in between.
    let epoch = Epoch()
    private var countdown: CountdownModel?
    private var current: ObserverModel?
    private var observers: [ObserverModel] = []
    /// How many observers were verified and forgotten before those in `observers`.
    private var verifiedObservers = 0
    /// The operations performed on this key, and the number each observer was registered at.
    private var operations = 0
    private var registeredAt: [Int] = []
    private(set) var countdownCount = 0

    init(key: String) { self.key = key }

    /// Forgets a countdown whose finish its current observer has heard.
    private func noteFinish() {
        if let current, !current.recorder.finishes.isEmpty, current.countdown === countdown {
            countdown = nil
        }
    }

    private func register(_ observer: ObserverModel) {
        append(observer)
        current = observer
    }

    private func revokeCurrent(_ h: Harness) {
        current?.revokedBy = h.queue.mark()
    }

    /// The recorder's observer, judging at each finish, from inside its own callback, that the
    /// key is free: `remaining(key:)` nil and the key gone from `activeKeys`. Judged only when
    /// no `start` or `cancel` of the key began since the observer was registered (`mine`) or
    /// while the queries ran.
    private func observer(_ recorder: Recorder, for call: String, epoch mine: UInt64, on s: any CountdownScheduler, in c: CheckContext) -> CountdownObserver {
        let record = recorder.observer(for: call)
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

    private func append(_ observer: ObserverModel) {
        observers.append(observer)
        registeredAt.append(operations)
    }

    func perform(_ call: RandomizedCall, duration: Duration, on h: Harness, in c: CheckContext) {
        operations += 1
        noteFinish()
        let s = h.scheduler
        let begin = h.now()
        let callBegan = SystemClocks.monotonic()
        defer { callNanoseconds += SystemClocks.monotonic() - callBegan }
        // Whether the countdown certainly still exists is judged at the end of the call: the
        // backend decides somewhere inside it, and a call can take milliseconds on a loaded
        // machine. Before the end, the countdown was certainly there if it cannot have run out.
        let model = countdown
        var certain: Bool { model.map { !$0.mayHaveFinished(at: h.now()) } ?? false }
        var why: String { model.map { $0.explain(at: h.now()) } ?? "no countdown" }
        switch call {
        case .start:
            let recorder = h.recorder()
            let outcome: CountdownStart
            let mine = epoch.bump()
            do {
                outcome = try s.start(key: key, duration: duration, observer: observer(recorder, for: "start", epoch: mine, on: s, in: c))
            } catch {
                c.fail("\(key): start(\(duration)) threw \(error)")
                return
            }
            switch outcome {
            case .started:
                c.expect(!certain, "\(key): start restarted a countdown that was still running (\(why))")
                let model = CountdownModel(startBegin: begin, duration: duration, allowance: c.granularity)
                countdown = model
                countdownCount += 1
                register(ObserverModel(recorder: recorder, countdown: model, expectedFirst: duration))
            case .attached(let remaining):
                if countdown == nil {
                    c.fail("\(key): start attached (\(remaining) left) though no countdown could be running")
                    let model = CountdownModel(startBegin: begin, duration: duration, allowance: c.granularity)
                    model.timingUnknown = true
                    countdown = model
                }
                revokeCurrent(h)
                register(ObserverModel(recorder: recorder, countdown: countdown,
                                       expectedFirst: remaining > .zero ? remaining : nil))
            }
        case .attach:
            let recorder = h.recorder()
            if let remaining = s.attach(key: key, observer: observer(recorder, for: "attach", epoch: epoch.value, on: s, in: c)) {
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
                append(ObserverModel(recorder: recorder, countdown: nil, expectedFirst: nil, mustStaySilent: true))
            }
        case .cancel:
            epoch.bump()
            if s.cancel(key: key) {
                c.expect(countdown != nil, "\(key): cancel returned true though no countdown could be running")
                revokeCurrent(h)
            } else {
                c.expect(!certain, "\(key): cancel returned false though a countdown was running (\(why))")
            }
            countdown = nil
        case .pause:
            let paused = s.pause(key: key)
            let end = h.now()
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
        case .resume:
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
        case .remaining:
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
        let begin = h.now()
        if c.expect(h.scheduler.resume(key: key), "\(key): resume of a paused countdown returned false") {
            model.pausedAtLeast += begin - since
            model.pausedSince = nil
        }
    }

    /// Whether an observer that was neither cancelled nor replaced has not heard its finish yet.
    var isAwaitingFinish: Bool {
        observers.contains { !$0.mustStaySilent && $0.revokedBy == nil && $0.recorder.finishes.isEmpty }
    }

    /// Checks and forgets the observers that were replaced or that heard nothing at least
    /// `age` operations of this key ago: nothing more may reach them, and a long simulation
    /// keeps only what it still has to judge. Returns how many finishes they heard.
    func verifyOld(in c: CheckContext, seed: UInt64, age: Int) -> Int {
        var done = 0
        while done < observers.count - 1, operations - registeredAt[done + 1] >= age { done += 1 }
        guard done > 0 else { return 0 }
        let finishes = verify(observers[..<done], in: c, seed: seed)
        observers.removeFirst(done)
        registeredAt.removeFirst(done)
        verifiedObservers += done
        return finishes
    }

    /// Checks every observer's events; returns how many finishes were heard.
    func verify(in c: CheckContext, seed: UInt64) -> Int {
        verify(observers[...], in: c, seed: seed)
    }

    private func verify(_ observers: ArraySlice<ObserverModel>, in c: CheckContext, seed: UInt64) -> Int {
        var finishes = 0
        for (index, observer) in zip(observers.indices, observers) {
            let label = "\(key) observer \(verifiedObservers + index) (seed \(seed))"
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
                c.expect(finish.at + c.granularity >= model.earliestFinish,
                         "\(label): finished \(DurationText.nanoseconds(Double(model.earliestFinish - finish.at))) before the deadline")
            }
        }
        return finishes
    }
}

/// A counter one thread bumps and any thread reads.
final class Epoch: Sendable {
    private let counter = Atomic<UInt64>(0)

    /// Bumps the counter and returns its new value.
    @discardableResult
    func bump() -> UInt64 { counter.add(1, ordering: .sequentiallyConsistent).newValue }

    var value: UInt64 { counter.load(ordering: .sequentiallyConsistent) }
}
