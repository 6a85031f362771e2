import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Testing

/// `profile.slow-observer` judges a backend by how late its countdowns finish while one observer
/// blocks the delivery queue. When the whole process stalls at the same time (a starved thread
/// pool, a frozen machine), every countdown is late, and the check must not blame the backend.
@Suite(.dedicatedThread) struct SlowObserverControlTests {
    /// Holds every finish of every scheduler it made (the check's and its control's) until
    /// 400 ms after the first of them came: the process stalled at the deadline.
    final class ProcessStall: Sendable {
        private let firstFinish = Locked<UInt64?>(nil)

        func hold() {
            let now = SystemClocks.monotonic()
            let first = firstFinish.withLock { first in
                if first == nil { first = now }
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

    @Test("a stall of the whole process at the deadline is no verdict on the backend: the control is late too")
    func processStallIsInconclusive() async throws {
        let stall = ProcessStall()
        let suite = CountdownConformance(name: "dispatch-source in a stalled process", options: .init(timeLimitPerCheck: .seconds(40))) { e in
            StalledWithTheProcess(
                try DispatchSourceScheduler(tickInterval: e.tickInterval, deliveryQueue: e.deliveryQueue), stall: stall)
        }
        let check = try #require(CountdownConformance.checks.first { $0.id == "profile.slow-observer" })
        let result = await runInSlot(suite, check)
        guard !distortedByThreadSanitizer(check) else { return }  // see ConformanceTests
        #expect(result.verdict == .inconclusive, "\(result.verdict): \(result.messages) — \(result.figure ?? "")")
        #expect(result.messages.joined().contains("the process stalled"), "\(result.messages)")
    }
}
