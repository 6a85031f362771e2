import Countdown
import CountdownSupport
import Dispatch
import Foundation

/// The `one-key` check: calls on one key from many threads at once behave as if made one at a
/// time. Of concurrent starts exactly one answers `.started`; of concurrent cancels of a running
/// countdown exactly one answers true; and any mix of start, cancel, pause and resume gives
/// answers some serial order of the same calls would give, each call placed between its own
/// beginning and end (linearizability, as Jepsen's checkers judge a history), with at most one
/// finish per `.started`.
enum OneKeyCheck {
    static let check = ConformanceCheck(
        "one-key", .contract,
        "concurrent calls on one key: one .started of many starts, one true of many cancels, any mix linearizable",
        body: run)

    static let threads = 8, rounds = 25

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(20))
        let spread = concurrentStarts(h, c)
        concurrentCancels(h, c)
        mixes(h, c, spread: spread)
    }

    /// Many threads start one key at once: one `.started`, the others `.attached`; one finish.
    /// A round at a time, each waiting for its finish: a backend that blocks a thread of
    /// libdispatch's shared pool per countdown (operation-queue) holds one at a time here.
    /// Judged by the instants each call began and returned (``StartRace``); a round whose calls
    /// were spread over more than the countdown (a loaded machine) doubles the next rounds'
    /// countdown, up to 2 s, so that the rounds stay concurrent.
    /// Returns what the figure says of the rounds spread over more than their countdown.
    private static func concurrentStarts(_ h: Harness, _ c: CheckContext) -> String? {
        let s = h.scheduler
        var duration = Duration.milliseconds(60)
        var spread = 0
        for round in 0..<rounds {
            let key = "one-key:start:\(round)"
            let recorders = (0..<threads).map { _ in h.recorder() }
            let race = StartRace.run(key, duration: duration, on: Array(repeating: s, count: threads), recorders: recorders, now: h.now)
            if let violation = race.violation(describing: "round \(round): \(threads) concurrent starts of one key") { c.fail(violation) }
            if !race.overlapped {
                spread += 1
                duration = min(duration * 2, .seconds(2))
            }
            let started = race.attempts.filter(\.started).count
            // The key is free once its finish is decided; the finish itself may come later (a
            // backend with a store delivers it once the file is written).
            let heard = h.waitUntil { s.remaining(key: key) == nil && recorders.contains { !$0.finishes.isEmpty } }
            c.expect(heard, "round \(round): the concurrently started countdown was not heard to finish within 10 s")
            h.drain()
            let finishes = recorders.reduce(0) { $0 + $1.finishes.count }
            c.expect(finishes <= max(started, 1),
                     "\(key): \(finishes) finishes for \(started) .started answers (at most one finish per .started)")
            for (index, recorder) in recorders.enumerated() { EventRules.wellFormed(recorder.all, "\(key) observer \(index)", in: c) }
        }
        guard spread > 0 else { return nil }
        return "\(spread) of \(rounds) rounds of starts spread over more than their countdown: judged by their timestamps, the countdown lengthened to \(DurationText.nanoseconds(Double(nanoseconds(duration))))"
    }

    /// Many threads cancel one running countdown at once: exactly one true.
    private static func concurrentCancels(_ h: Harness, _ c: CheckContext) {
        let s = h.scheduler
        for round in 0..<rounds {
            let key = "one-key:cancel:\(round)"
            guard (try? s.start(key: key, duration: .seconds(60), observer: h.ignoring("start"))) == .started else {
                c.fail("round \(round): start of a fresh key did not answer .started")
                continue
            }
            if round % 2 == 1 { _ = s.pause(key: key) }  // a paused countdown is cancelled as well
            let answers = Locked([Bool](repeating: false, count: threads))
            onThreads(threads) { thread in
                let cancelled = s.cancel(key: key)
                answers.withLock { $0[thread] = cancelled }
            }
            let all = answers.withLock { $0 }
            c.expect(all.filter { $0 }.count == 1,
                     "round \(round): \(threads) concurrent cancels of one \(round % 2 == 1 ? "paused" : "running") countdown answered \(all): \(all.filter { $0 }.count) true, not one")
            c.expect(s.remaining(key: key) == nil, "round \(round): the countdown runs on after concurrent cancels")
        }
    }

    /// Random mixes of start, cancel, pause, resume and remaining on one key from four threads, then a
    /// look at the end state; the history must be linearizable.
    private static func mixes(_ h: Harness, _ c: CheckContext, spread: String?) {
        let s = h.scheduler
        let mixThreads = 4, perThread = 3
        var failures = 0
        for round in 0..<rounds where failures < 3 {
            let key = "one-key:mix:\(round)"
            let history = Locked<[Call]>([])
            let recorders = Locked<[Recorder]>([])
            onThreads(mixThreads) { thread in
                var random = SplitMix(seed: c.options.seed &+ UInt64(round * 31 + thread))
                for _ in 0..<perThread {
                    let kind = Call.Kind.allCases[random.below(Call.Kind.allCases.count)]
                    let recorder = h.recorder()
                    let begin = SystemClocks.monotonic()
                    let answer: Call.Answer
                    switch kind {
                    case .start:
                        recorders.withLock { $0.append(recorder) }
                        switch try? s.start(key: key, duration: .seconds(60), observer: recorder.observer) {
                        case .started: answer = .started
                        case .attached: answer = .attached
                        case nil: answer = .threw
                        }
                    case .cancel: answer = s.cancel(key: key) ? .yes : .no
                    case .pause: answer = s.pause(key: key) ? .yes : .no
                    case .resume: answer = s.resume(key: key) ? .yes : .no
                    case .remaining: answer = s.remaining(key: key) != nil ? .yes : .no
                    }
                    let end = SystemClocks.monotonic()
                    history.withLock { $0.append(Call(thread: thread, kind: kind, answer: answer, begin: begin, end: end)) }
                }
            }
            // The end state, read after every call returned: is it there, and is it paused?
            var calls = history.withLock { $0 }
            let last = (calls.map(\.end).max() ?? 0) + 1
            let present = s.remaining(key: key) != nil
            let resumed = s.resume(key: key)
            calls.append(Call(thread: -1, kind: .remaining, answer: present ? .yes : .no, begin: last, end: last + 1))
            calls.append(Call(thread: -1, kind: .resume, answer: resumed ? .yes : .no, begin: last + 2, end: last + 3))
            if !Linearizability.holds(calls) {
                failures += 1
                c.fail("round \(round): no serial order of these calls on one key gives their answers: "
                    + calls.sorted { $0.begin < $1.begin }.map(\.description).joined(separator: "; "))
            }
            _ = s.cancel(key: key)
            h.drain()
            for recorder in recorders.withLock({ $0 }) {
                EventRules.wellFormed(recorder.all, "\(key)", in: c)
                c.expect(recorder.finishes.isEmpty, "\(key): a minute-long countdown finished")
            }
        }
        c.figure("\(rounds) rounds each of \(threads) concurrent starts, \(threads) concurrent cancels, and a mix of \(mixThreads * perThread) calls from \(mixThreads) threads"
            + (spread.map { "; \($0)" } ?? ""))
    }
}

/// One call of a history on one key: what it was, what it answered, when it began and ended.
struct Call: CustomStringConvertible {
    enum Kind: CaseIterable { case start, cancel, pause, resume, remaining }
    enum Answer { case started, attached, yes, no, threw }

    let thread: Int
    let kind: Kind
    let answer: Answer
    let begin: UInt64
    let end: UInt64

    var description: String {
        let who = thread < 0 ? "after all" : "thread \(thread)"
        return "\(who) \(kind) → \(answer)"
    }
}

/// Whether a history of calls on one key has a serial order, consistent with real time (a call
/// that ended before another began comes first), in which the contract's model of one key gives
/// every call its answer: a search over the calls that may come next, as Wing and Gong's.
enum Linearizability {
    enum State: Hashable { case none, running, paused }

    /// What the contract says a call answers in a state, and the state after it.
    static func step(_ kind: Call.Kind, _ state: State) -> (Call.Answer, State) {
        switch (kind, state) {
        case (.start, .none): (.started, .running)
        case (.start, _): (.attached, state)
        case (.cancel, .none): (.no, .none)
        case (.cancel, _): (.yes, .none)
        case (.pause, .running): (.yes, .paused)
        case (.pause, _): (.no, state)
        case (.resume, .paused): (.yes, .running)
        case (.resume, _): (.no, state)
        case (.remaining, .none): (.no, .none)
        case (.remaining, _): (.yes, state)
        }
    }

    static func holds(_ calls: [Call], from initial: State = .none) -> Bool {
        precondition(calls.count < 64)
        var failed = Set<Int>()  // (done mask, state) already searched in vain
        func search(_ done: UInt64, _ state: State) -> Bool {
            if done == (UInt64(1) << calls.count) - 1 { return true }
            let memo = Int(truncatingIfNeeded: done) &* 3 &+ (state == .none ? 0 : state == .running ? 1 : 2)
            if failed.contains(memo) { return false }
            // The earliest end among the calls not placed: a call that begins after it cannot
            // come next.
            var earliestEnd = UInt64.max
            for (i, call) in calls.enumerated() where done & (1 << i) == 0 { earliestEnd = min(earliestEnd, call.end) }
            for (i, call) in calls.enumerated() where done & (1 << i) == 0 && call.begin <= earliestEnd {
                let (answer, next) = step(call.kind, state)
                if answer == call.answer, search(done | (1 << i), next) { return true }
            }
            failed.insert(memo)
            return false
        }
        return search(0, initial)
    }
}
