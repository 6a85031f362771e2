@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Foundation
import Testing

/// `store.restore` meant its 100 ms countdown "gone" to run out while nothing ran. On a loaded
/// machine the shutdown came later than that (issue 64's campaign beside `stress-ng --cpu 2`,
/// `task`, 1 run of 11): "gone" finished in the first launch, as it should, and the check failed
/// the backend with "the relaunch named it [], not expired once".
@Suite(.dedicatedThread)
struct StoreRestoreSlowShutdownTests {
    /// A correct keyed backend on a machine slow to reach its shutdown: 300 ms pass first.
    final class SlowToShutDown: ForwardingScheduler, KeyedCountdownScheduler, @unchecked Sendable {
        private var keyed: any KeyedCountdownScheduler { inner as! any KeyedCountdownScheduler }
        func restore(from store: CountdownStore) throws(CountdownStoreError) -> CountdownRestoration { try keyed.restore(from: store) }
        func waitUntilStored() { keyed.waitUntilStored() }

        override func shutdown() {
            Thread.sleep(forTimeInterval: 0.3)
            super.shutdown()
        }
    }

    @Test("a countdown that finished before a late shutdown is named nothing by the relaunch, and that passes")
    func finishedBeforeTheShutdown() async throws {
        // The timestamp backend, whose deadlines are instants: the check's other judgements
        // (the file's deadline against the scheduler's own) hold to the nanosecond.
        let suite = CountdownConformance(name: "timestamp(continuous), slow to shut down", options: .init(timeLimitPerCheck: .seconds(60))) { e in
            SlowToShutDown(try TimestampScheduler(tickInterval: e.tickInterval, clock: .continuous, deliveryQueue: e.deliveryQueue))
        }
        let check = try #require(CountdownConformance.checks.first { $0.id == "store.restore" })
        let result = await runInSlot(suite, check)
        #expect(result.verdict == .pass, "\(result.verdict): \(result.messages) — \(result.figure ?? "")")
    }
}
