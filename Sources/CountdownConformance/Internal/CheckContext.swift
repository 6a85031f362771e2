import Countdown
import CountdownSupport
import Dispatch
import Foundation

/// One run of one check: makes its schedulers, collects every finding, and cleans up.
final class CheckContext: Sendable {
    let check: ConformanceCheck
    /// The suite's name: a fleet check's member processes find the suite by it.
    let suite: String
    let options: CountdownConformance.Options
    private let factory: CountdownConformance.Factory

    private struct State {
        var failures: [String] = []
        var notes: [String] = []
        var figure: String?
        var verdict: CheckResult.Verdict?
        var schedulers: [any CountdownScheduler] = []
        var abandoned = false
        /// The time the check's first scheduler runs in.
        var mode: CheckResult.TimeMode?
        /// What "never before" allows for the check's first scheduler (``ClockAllowance``).
        var granularity: UInt64?
        /// Time the watchdog does not count: spent waiting for a turn the check does not control,
        /// and since when it waits now.
        var excused: UInt64 = 0
        var waitingSince: UInt64?
    }

    private let state = Locked(State())

    init(check: ConformanceCheck, suite: String, options: CountdownConformance.Options, factory: @escaping CountdownConformance.Factory) {
        self.check = check
        self.suite = suite
        self.options = options
        self.factory = factory
    }

    /// What a "never before" comparison allows: nothing in virtual time, where the check reads
    /// the backend's own clock; in real time how far two clocks may differ (``ClockAllowance``).
    var granularity: UInt64 { state.withLock { $0.granularity } ?? ClockAllowance.process }

    // MARK: Findings

    /// Records a failure; the check goes on, so that every failure is reported.
    func fail(_ message: String) {
        state.withLock { $0.failures.append(message) }
    }

    /// Records a failure unless `condition` holds.
    @discardableResult
    func expect(_ condition: Bool, _ message: @autoclosure () -> String) -> Bool {
        if !condition { fail(message()) }
        return condition
    }

    /// Records a failure unless `actual` (read once, by the caller) equals `expected`; the
    /// message shows the value that was compared, never a fresh read.
    @discardableResult
    func expectEqual<T: Equatable>(_ actual: T, _ expected: T, _ what: String, _ context: String = "") -> Bool {
        expect(actual == expected, "\(what) is \(actual), not \(expected)\(context.isEmpty ? "" : " " + context)")
    }

    func figure(_ text: String) {
        state.withLock { $0.figure = text }
    }

    /// The check does not apply; `why` is reported.
    func notApplicable(_ why: String) {
        state.withLock {
            $0.verdict = .notApplicable
            $0.notes.append(why)
        }
    }

    /// Neither outcome could be told apart; `why` is reported.
    func inconclusive(_ why: String) {
        state.withLock {
            $0.verdict = .inconclusive
            $0.notes.append(why)
        }
    }

    /// The check begins (true) or ends waiting for a turn it does not control (a fleet trial's):
    /// the watchdog allows that time on top of the check's limit.
    func waitingForTurn(_ waiting: Bool) {
        let now = SystemClocks.monotonic()
        state.withLock { s in
            if waiting {
                s.waitingSince = now
            } else if let since = s.waitingSince {
                s.excused += now - since
                s.waitingSince = nil
            }
        }
    }

    /// The time waited for turns so far, the wait going on included.
    var excused: Duration {
        let now = SystemClocks.monotonic()
        return state.withLock { s in .nanoseconds(Int64(s.excused + (s.waitingSince.map { now - $0 } ?? 0))) }
    }

    // MARK: Schedulers

    /// Two schedulers sharing their countdowns, for a fleet check; nil, the check marked not
    /// applicable, for a backend whose countdowns are its own.
    func makeFleet(tick: Duration) throws -> (Harness, Harness)? {
        let first = try makeScheduler(tick: tick)
        guard first.scheduler.profile.sharing == .fleet else {
            notApplicable("its countdowns are its own (profile sharing: \(first.scheduler.profile.sharing.rawValue)): there is no fleet to share them")
            return nil
        }
        return (first, try makeScheduler(tick: tick, sharing: first))
    }

    /// A fresh scheduler from the factory, with its own delivery queue and movable wall clock.
    func makeScheduler(tick: Duration) throws -> Harness {
        try OSThreads.creation.withLock { _ throws -> Harness in try makeSchedulerUnlocked(tick: tick) }
    }

    /// A second scheduler on `shared`'s namespace: for a fleet backend, it shares `shared`'s
    /// countdowns (another process of the fleet, as far as the contract can tell).
    func makeScheduler(tick: Duration, sharing shared: Harness) throws -> Harness {
        try OSThreads.creation.withLock { _ throws -> Harness in try makeSchedulerUnlocked(tick: tick, namespace: shared.namespace) }
    }

    /// For a check that already holds ``OSThreads/creation``.
    func makeSchedulerUnlocked(tick: Duration, namespace: String = Harness.freshNamespace()) throws -> Harness {
        let harness = try Harness(tick: tick, namespace: namespace, factory: factory) { [weak self] in self?.fail($0) }
        let allowance = ClockAllowance.of(harness.time.mode, harness.scheduler.profile.sharing)
        state.withLock {
            $0.mode = $0.mode ?? harness.time.mode
            $0.granularity = $0.granularity ?? allowance
        }
        state.withLock { $0.schedulers.append(harness.scheduler) }
        return harness
    }

    /// A fresh scheduler and the threads it started while it was made: its own. Call from a
    /// thread named apart (`nameCurrentThread`), so that threads the backend starts without
    /// naming them, which inherit the name, are not mistaken for the check's.
    func makeSchedulerWatchingThreads(tick: Duration) throws -> (Harness, Set<Int>) {
        try OSThreads.creation.withLock { _ throws -> (Harness, Set<Int>) in
            try OSThreads.watching { try makeSchedulerUnlocked(tick: tick) }
        }
    }

    /// Expects the scheduler's own threads to end within 5 s of `what`, and says how many
    /// there were as the check's figure.
    func expectThreadsEnded(_ own: Set<Int>, after what: String) {
        let leftover = OSThreads.waitForExit(own, timeout: .seconds(5))
        expect(leftover.isEmpty, "threads the scheduler started still run 5 s after \(what): \(leftover.joined(separator: ", "))")
        if OSThreads.current() == nil {
            figure("threads not observable here (no /proc): only the release of the scheduler was checked")
        } else {
            figure("\(own.count) thread(s) of its own, \(leftover.count) left after \(what)")
        }
    }

    /// Forgets a scheduler, so the check can see whether anything else still holds it.
    func release(_ scheduler: any CountdownScheduler) {
        state.withLock { $0.schedulers.removeAll { $0 === scheduler } }
    }

    func execute() {
        do {
            if let why = check.needsRealWorld, try isVirtual() {
                notApplicable("not in virtual time: \(why)")
            } else {
                try check.body(self)
            }
        } catch {
            fail("threw \(error)")
        }
        shutDownSchedulers()
    }

    /// Whether the backend runs in virtual time: a scheduler made to look, and shut down at
    /// once, so that it is not there while the check measures.
    private func isVirtual() throws -> Bool {
        let probe = try makeScheduler(tick: .milliseconds(10))
        release(probe.scheduler)
        probe.scheduler.shutdown()
        return probe.time.mode == .virtual
    }

    /// A context of its own for the same check, backend and options: for a run whose findings
    /// are looked at, not reported (a simulation shrinking a failure).
    func fresh() -> CheckContext {
        CheckContext(check: check, suite: suite, options: options, factory: factory)
    }

    /// The failures recorded so far.
    var failures: [String] { state.withLock { $0.failures } }

    /// Shuts down every scheduler the check made, unless the check hung.
    func shutDownSchedulers() {
        let schedulers = state.withLock { state -> [any CountdownScheduler] in
            defer { state.schedulers.removeAll() }
            return state.abandoned ? [] : state.schedulers
        }
        for scheduler in schedulers { scheduler.shutdown() }
    }

    /// The check hung: its schedulers are left alone (shutting them down could hang too).
    func abandon() {
        state.withLock { $0.abandoned = true }
    }

    func result(seconds: Double) -> CheckResult {
        state.withLock { s in
            let verdict: CheckResult.Verdict = s.failures.isEmpty ? (s.verdict ?? .pass) : .fail
            return CheckResult(
                id: check.id, kind: check.kind, verdict: verdict, figure: s.figure,
                messages: s.failures + s.notes, seconds: seconds, time: s.mode ?? .real)
        }
    }
}
