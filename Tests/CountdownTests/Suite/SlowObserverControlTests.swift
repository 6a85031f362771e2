import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Testing

/// `profile.slow-observer` judges a backend by how late its countdowns finish while one observer
/// blocks the delivery queue. When the whole process stalls at the same time (a starved thread
/// pool, a frozen machine), every countdown is late, and the check must not blame the backend.
@Suite(.dedicatedThread,
       .enabled(if: ThreadSanitizer.acquire == nil, "its verdicts rest on timing the sanitizer distorts (see ConformanceTests)"))
struct SlowObserverControlTests {
    /// Holds finishes until 400 ms after the first of them came: the process stalled at the
    /// deadline. Once (every scheduler's finishes, from the first heard in the process), or at
    /// each attempt of the check: each attempt makes fresh schedulers whose countdowns end
    /// together, so each scheduler's finishes are held from its own first. (Telling attempts
    /// apart by time instead let an earlier attempt's 10 s countdown, finishing during a late
    /// third attempt on a loaded machine, start that attempt's stall early: it was then clean.)
    final class ProcessStall: Sendable {
        enum When { case once, atEveryAttempt }
        private let processFirst = Locked<UInt64?>(nil)
        let when: When

        init(_ when: When) { self.when = when }

        func hold(schedulerFirst: Locked<UInt64?>) {
            let now = SystemClocks.monotonic()
            let first = (when == .once ? processFirst : schedulerFirst).withLock { first in
                if first == nil { first = now }
                return first!
            }
            SystemClocks.sleep(untilMonotonic: first + 400_000_000)
        }
    }

    final class StalledWithTheProcess: ForwardingScheduler, @unchecked Sendable {
        let stall: ProcessStall
        let firstFinish = Locked<UInt64?>(nil)

        init(_ inner: any CountdownScheduler, stall: ProcessStall) {
            self.stall = stall
            super.init(inner)
        }

        override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
            { [stall, firstFinish] event in
                if event.kind == .finished { stall.hold(schedulerFirst: firstFinish) }
                observer(event)
            }
        }
    }

    func result(_ stall: ProcessStall) async throws -> CheckResult {
        let suite = CountdownConformance(name: "dispatch-source in a stalled process", options: .init(timeLimitPerCheck: .seconds(60))) { e in
            StalledWithTheProcess(
                try DispatchSourceScheduler(tickInterval: e.tickInterval, deliveryQueue: e.deliveryQueue), stall: stall)
        }
        let check = try #require(CountdownConformance.checks.first { $0.id == "profile.slow-observer" })
        return await runInSlot(suite, check)
    }

    @Test("a stall of the whole process at every attempt's deadline is no verdict on the backend: the control is late too")
    func processStallIsInconclusive() async throws {
        let result = try await result(ProcessStall(.atEveryAttempt))
        #expect(result.verdict == .inconclusive, "\(result.verdict): \(result.messages) — \(result.figure ?? "")")
        #expect(result.messages.joined().contains("three attempts could not tell"), "\(result.messages)")
        #expect(result.messages.joined().contains("the process stalled"), "\(result.messages)")
    }

    /// One disturbed attempt is made again: the backend is judged by a clean one.
    @Test("a stall at one attempt's deadline only: the next attempt judges the backend")
    func oneStallIsMadeAgain() async throws {
        let result = try await result(ProcessStall(.once))
        #expect(result.verdict == .pass, "\(result.verdict): \(result.messages) — \(result.figure ?? "")")
    }

    /// One countdown's finish 350 ms late on its own (as `redis(keyspace)`'s expiry sampled
    /// among many keys with a TTL), every other on time: delivered later on the delivery queue,
    /// which it does not hold.
    final class OneLateFinish: ForwardingScheduler, @unchecked Sendable {
        let queue: DispatchQueue

        init(_ inner: any CountdownScheduler, queue: DispatchQueue) {
            self.queue = queue
            super.init(inner)
        }

        override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
            guard key == "k0" else { return observer }
            return { [queue] event in
                guard event.kind == .finished else { return observer(event) }
                queue.asyncAfter(deadline: .now() + .milliseconds(350)) { observer(event) }
            }
        }
    }

    @Test("one countdown late on its own, the others on time, is no stall: no verdict, not a failure")
    func oneLateFinishIsNoStall() async throws {
        // Before: judged by the latest finish alone, this was "observed stalls-countdowns".
        let suite = CountdownConformance(name: "dispatch-source with one late finish", options: .init(timeLimitPerCheck: .seconds(60))) { e in
            OneLateFinish(try DispatchSourceScheduler(tickInterval: e.tickInterval, deliveryQueue: e.deliveryQueue), queue: e.deliveryQueue)
        }
        let check = try #require(CountdownConformance.checks.first { $0.id == "profile.slow-observer" })
        let result = await runInSlot(suite, check)
        #expect(result.verdict == .inconclusive, "\(result.verdict): \(result.messages) — \(result.figure ?? "")")
        #expect(result.messages.joined().contains("neither all on time"), "\(result.messages)")
    }
}
