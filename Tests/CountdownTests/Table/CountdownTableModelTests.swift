import Testing

@testable import Countdown
@testable import CountdownConformance

/// 100 000 seeded random operations on the table, each answer and event compared with a
/// reference model of the contract, in made-up time: a failure replays exactly from its seed.
/// Events are delivered late, a random part of what is queued at a time, as a delivery queue
/// that lags would: an observer let go (cancelled, replaced) hears nothing more, even of what
/// was queued before; one whose countdown finished hears its finish, even when its place was
/// taken meanwhile by a countdown that was then cancelled.
@Suite("CountdownTable against a model")
struct CountdownTableModelTests {
    typealias Table = EngineState<DeadlineTrack, Int>

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// What the contract says of one countdown.
    struct Expected {
        /// Running: its deadline, ms. Paused: nil, and `frozen` is the time left.
        var deadline: Int?
        var frozen: Int?
        let ear: Ear
        func remaining(at now: Int) -> Int { frozen ?? max(deadline! - now, 0) }
    }

    /// An observer checking the contract's promises about what it hears.
    final class Ear: @unchecked Sendable {
        // Used on the test's thread only.
        var last: Int?
        var finished = false
        var problems: [String] = []
        let key: String
        /// The model let it go (a cancel, a replacement): it must hear nothing more.
        var letGo = false
        /// Its countdown finished: it must hear the finish, once everything queued is delivered.
        var owedFinish = false
        lazy var observer: CountdownObserver = { [unowned self] event in
            if letGo { problems.append("\(key): \(event) after it was let go") }
            if finished { problems.append("\(key): \(event) after the finish") }
            switch event.kind {
            case .finished:
                finished = true
            case .tick:
                let ms = Int(event.remaining.nanoseconds / 1_000_000)
                if ms <= 0 { problems.append("\(key): a tick of \(event.remaining)") }
                if let last, ms > last { problems.append("\(key): a tick of \(ms) ms after one of \(last) ms") }
                last = ms
            }
        }
        init(key: String) { self.key = key }
    }

    struct Run {
        static let origin: UInt64 = 1_000_000_000_000
        static let keys = ["a", "b", "c", "d", "e", "f", "g", "h"]
        static let capacity = 6
        static let maximum = 10_000

        var table = Table(rules: .init(tick: .milliseconds(100), maximumDuration: .milliseconds(maximum), capacity: capacity))
        var now = 0
        var model: [String: Expected] = [:]
        var timers: [(due: UInt64, id: CountdownID)] = []
        var nextHandle = 0
        var finishes = 0
        /// Cancels that retired an observer, and that revoked one.
        var retires = 0, revokes = 0
        var ears: [Ear] = []
        /// Every ticket below it is delivered.
        var deliveredBelow: UInt64 = 0
        /// The events decided and not delivered yet, with their tickets, in order.
        var pending: [(ticket: UInt64, delivery: Delivery)] = []
        /// The ticket after the last one decided.
        var nextTicket: UInt64 = 0
        /// The ticket of the last event decided for each key's countdown.
        var lastTicket: [String: UInt64] = [:]

        static func moment(_ ms: Int) -> Moment {
            let ns = origin + UInt64(ms) * 1_000_000
            return Moment(monotonic: MonotonicInstant(nanoseconds: ns), clock: Int64(ns))
        }

        static func ms(_ instant: MonotonicInstant) -> Int { Int((instant.nanoseconds - origin) / 1_000_000) }

        /// Carries out a decision as a driver would: timers into the list, handles kept at once;
        /// its events, taken from the pipeline, are queued for ``deliver(_:)``.
        mutating func carryOut<A>(_ decision: Table.Decision<A>) throws {
            for effect in decision.effects {
                if case .arm(let id, _, let firstFire) = effect {
                    timers.append((firstFire.nanoseconds, id))
                    nextHandle += 1
                    try carryOut(table.keep(nextHandle, for: id))
                }
            }
            // Taken from the pipeline, as a drain takes them: numbered in the order of
            // every event decided.
            let events = table.pipeline.takePending()
            guard !events.isEmpty else { return }
            let first = table.pipeline.decided - UInt64(events.count)
            for (offset, delivery) in events.enumerated() {
                let ticket = first + UInt64(offset)
                lastTicket[delivery.event.key] = ticket
                pending.append((ticket, delivery))
            }
            nextTicket = table.pipeline.decided
            // Each running countdown's place names its last event's ticket: what a cancel reads
            // to let its observer go without revoking it.
            for key in Set(events.map(\.event.key)) {
                guard let place = table.observation(of: key)?.registration.place else { continue }
                let stamped = table.places[Int(place)].lastTicket
                try expect(stamped == lastTicket[key], "\(key)'s place names ticket \(stamped), its last event is \(lastTicket[key]!)")
            }
        }

        /// Delivers the first `count` events queued (all, when nil), in order.
        mutating func deliver(_ count: Int? = nil) {
            let count = min(count ?? pending.count, pending.count)
            for (_, delivery) in pending[..<count] { delivery.deliver() }
            pending.removeFirst(count)
            deliveredBelow = pending.first?.ticket ?? nextTicket
        }

        /// A countdown's observer that is let go (cancel, replaced) is let go of by the same decision.
        func expectLetGo<A>(_ ear: Ear?, by decision: Table.Decision<A>, _ what: String) throws {
            guard ear != nil else { return }
            let lets = decision.actions.letGo != nil || decision.effects.contains { if case .letGo = $0 { true } else { false } }
            try expect(lets, "\(what) did not let go of the observer it replaced")
        }

        func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
            if !condition { throw Failure(description: message()) }
        }

        mutating func step(_ random: inout SplitMix) throws {
            let key = Int.random(in: 0..<20, using: &random) == 0 ? "" : Self.keys.randomElement(using: &random)!
            // The delivery queue lags: it delivers a random part of what is queued, now and then.
            if Int.random(in: 0..<3, using: &random) == 0 { deliver(Int.random(in: 0...pending.count, using: &random)) }
            switch Int.random(in: 0..<9, using: &random) {
            case 0, 1:
                let duration = Int.random(in: -5...(Self.maximum + 500), using: &random)
                let ear = Ear(key: key)
                ears.append(ear)
                let expected: Result<CountdownStart, CountdownError>
                if key.isEmpty { expected = .failure(.emptyKey) }
                else if duration <= 0 { expected = .failure(.nonPositiveDuration(.milliseconds(duration))) }
                else if duration > Self.maximum { expected = .failure(.durationAboveMaximum(.milliseconds(duration), maximum: .milliseconds(Self.maximum))) }
                else if let running = model[key] { expected = .success(.attached(remaining: .milliseconds(running.remaining(at: now)))) }
                else if model.count >= Self.capacity { expected = .failure(.capacityExceeded(capacity: Self.capacity)) }
                else { expected = .success(.started) }
                do {
                    let decision = try table.start(
                        key: key, hash: KeyIndex.Hash(key, hasher: table.keyHasher), duration: .milliseconds(duration),
                        observer: ear.observer, now: Self.moment(now), deliveredBelow: deliveredBelow)
                    try expect(expected == .success(decision.answer), "start(\(key), \(duration) ms) answered \(decision.answer), the model \(expected)")
                    if decision.answer == .started {
                        model[key] = Expected(deadline: now + duration, frozen: nil, ear: ear)
                    } else {
                        try expectLetGo(model[key]!.ear, by: decision, "start(\(key)) attaching")
                        model[key]!.ear.letGo = true
                        model[key] = Expected(deadline: model[key]!.deadline, frozen: model[key]!.frozen, ear: ear)
                    }
                    try carryOut(decision)
                } catch let error as CountdownError {
                    try expect(expected == .failure(error), "start(\(key), \(duration) ms) threw \(error), the model \(expected)")
                }
            case 2:
                let ear = Ear(key: key)
                ears.append(ear)
                let decision = table.attach(key: key, observer: ear.observer, now: Self.moment(now))
                let expected = model[key].map { Duration.milliseconds($0.remaining(at: now)) }
                try expect(decision.answer == expected, "attach(\(key)) answered \(String(describing: decision.answer)), the model \(String(describing: expected))")
                try expectLetGo(model[key]?.ear, by: decision, "attach(\(key))")
                model[key]?.ear.letGo = true
                if let running = model[key] { model[key] = Expected(deadline: running.deadline, frozen: running.frozen, ear: ear) }
                try carryOut(decision)
            case 3:
                // What the delivery queue says it delivered: all of it, or less (it lags), at
                // random or right at the edge of the observer's last event.
                var belows = [deliveredBelow, UInt64.random(in: 0...deliveredBelow, using: &random)]
                if model[key] != nil, let last = lastTicket[key] { belows += [min(last, deliveredBelow), min(last + 1, deliveredBelow)] }
                let below = belows.randomElement(using: &random)!
                let decision = table.cancel(key: key, deliveredBelow: below)
                try expect(decision.answer == (model[key] != nil), "cancel(\(key)) answered \(decision.answer)")
                if let ear = model[key]?.ear {
                    try expectLetGo(ear, by: decision, "cancel(\(key))")
                    ear.letGo = true
                    if lastTicket[key].map({ $0 < below }) ?? true { retires += 1 } else { revokes += 1 }
                }
                model[key] = nil
                try carryOut(decision)
            case 4:
                let decision = table.pause(key: key, now: Self.moment(now))
                let running = model[key].map { $0.frozen == nil } ?? false
                try expect(decision.answer == running, "pause(\(key)) answered \(decision.answer)")
                if running, let m = model[key] { model[key] = Expected(deadline: nil, frozen: m.remaining(at: now), ear: m.ear) }
                try carryOut(decision)
            case 5:
                let decision = table.resume(key: key, now: Self.moment(now))
                let paused = model[key].map { $0.frozen != nil } ?? false
                try expect(decision.answer == paused, "resume(\(key)) answered \(decision.answer)")
                if paused, let m = model[key] { model[key] = Expected(deadline: now + m.frozen!, frozen: nil, ear: m.ear) }
                try carryOut(decision)
            case 6:
                let remaining = table.remaining(key: key, now: Self.moment(now))
                let expected = model[key].map { Duration.milliseconds($0.remaining(at: now)) }
                try expect(remaining == expected, "remaining(\(key)) is \(String(describing: remaining)), the model \(String(describing: expected))")
                try expect(table.activeKeys.sorted() == model.keys.sorted(), "activeKeys \(table.activeKeys.sorted()), the model \(model.keys.sorted())")
                try expect(table.activeCount == model.count, "activeCount \(table.activeCount), the model \(model.count)")
            default:
                try advance(by: Int.random(in: 0...700, using: &random))
            }
        }

        /// Moves time on, firing every timer due on the way at its own instant, as a mechanism
        /// that is never late would.
        mutating func advance(by ms: Int) throws {
            let target = now + ms
            while let earliest = timers.indices.min(by: { timers[$0].due < timers[$1].due }),
                  Self.ms(MonotonicInstant(nanoseconds: timers[earliest].due)) <= target {
                let (due, id) = timers.remove(at: earliest)
                now = Self.ms(MonotonicInstant(nanoseconds: due))
                let decision = table.fire(id, now: Self.moment(now))
                switch decision.answer {
                case .continues(let next):
                    timers.append((next.nanoseconds, id))
                case .finished:
                    let finished = model.first { $0.value.deadline != nil && $0.value.deadline! <= now }
                    try expect(finished != nil, "a finish at \(now) ms that the model does not owe")
                    try expect(finished!.value.deadline == now, "\(finished!.key) finished at \(now) ms, its deadline is \(finished!.value.deadline!) ms")
                    finished!.value.ear.owedFinish = true
                    model[finished!.key] = nil
                    finishes += 1
                case .stale:
                    break
                }
                try carryOut(decision)
            }
            now = target
            if let late = model.first(where: { $0.value.deadline.map { $0 <= now } ?? false }) {
                throw Failure(description: "\(late.key) ran past its deadline \(late.value.deadline!) ms at \(now) ms")
            }
        }
    }

    @Test func replaysSeededOperationsAgainstTheModel() throws {
        let seed: UInt64 = 0xC0FF_EE00_2026_1124
        var random = SplitMix(seed: seed)
        var run = Run()
        for step in 0..<100_000 {
            do {
                try run.step(&random)
            } catch {
                Issue.record("seed \(seed), operation \(step), at \(run.now) ms: \(error)")
                return
            }
        }
        run.deliver()
        let problems = run.ears.flatMap(\.problems)
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        let unheard = run.ears.filter { $0.owedFinish && !$0.finished }
        #expect(unheard.isEmpty, "\(unheard.count) finishes decided and never heard, the first of \(unheard.first?.key ?? "")")
        #expect(run.finishes > 1000, "the run finished countdowns (\(run.finishes)), not only started them")
        #expect(run.retires > 100 && run.revokes > 100, "cancels both retired (\(run.retires)) and revoked (\(run.revokes))")
    }
}

/// The conformance suite's seeded generator, as the standard library's random functions take it.
extension SplitMix: RandomNumberGenerator {}
