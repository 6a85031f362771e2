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
    /// Holds every finish of every scheduler it made (the check's and its control's) until
    /// 400 ms after the first of them came: the process stalled at the deadline. Once, or at
    /// each attempt of the check (finishes more than 1.5 s after the stall's first belong to a
    /// new attempt, whose countdowns last 3 s).
    final class ProcessStall: Sendable {
        private let firstFinish = Locked<UInt64?>(nil)
        let everyAttempt: Bool

        init(everyAttempt: Bool) { self.everyAttempt = everyAttempt }

        func hold() {
            let now = SystemClocks.monotonic()
            let first = firstFinish.withLock { first in
                if first == nil || (everyAttempt && now > first! + 1_500_000_000) { first = now }
                return first!
            }
            SystemClocks.sleep(untilMonotonic: first + 400_000_000)
        }
    }

    final class StalledWithTheProcess: ForwardingScheduler, @unchecked Sendable {
        let stall: ProcessStall

        init(_ inner: any CountdownScheduler, stall: ProcessStall) {
            self.stall = stall
            super.init(inner)
        }

        override func wrap(_ observer: @escaping CountdownObserver, key: String) -> CountdownObserver {
            { [stall] event in
                if event.kind == .finished { stall.hold() }
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
        let result = try await result(ProcessStall(everyAttempt: true))
        #expect(result.verdict == .inconclusive, "\(result.verdict): \(result.messages) — \(result.figure ?? "")")
        #expect(result.messages.joined().contains("three attempts could not tell"), "\(result.messages)")
        #expect(result.messages.joined().contains("the process stalled"), "\(result.messages)")
    }

    /// One disturbed attempt is made again: the backend is judged by a clean one.
    @Test("a stall at one attempt's deadline only: the next attempt judges the backend")
    func oneStallIsMadeAgain() async throws {
        let result = try await result(ProcessStall(everyAttempt: false))
        #expect(result.verdict == .pass, "\(result.verdict): \(result.messages) — \(result.figure ?? "")")
    }
}
