import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `delivery` check: every callback runs on the delivery queue, one at a time.
enum DeliveryCheck {
    static let check = ConformanceCheck(
        "delivery", .contract,
        "every callback runs on the delivery queue, one at a time",
        body: run)

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(5))
        let logs = (0..<20).map { _ in h.recorder() }
        for (i, log) in logs.enumerated() {
            try h.scheduler.start(key: "k\(i)", duration: .milliseconds(150 + 10 * Int64(i)), observer: log.observer)
        }
        c.expect(h.waitUntil { logs.allSatisfy { !$0.finishes.isEmpty } }, "not every countdown finished")
        h.drain()
        let records = logs.flatMap(\.all)
        let off = records.filter { !$0.onDeliveryQueue }.count
        c.expect(off == 0, "\(off) of \(records.count) callbacks ran off the delivery queue")
        c.expect(h.queue.overlaps == 0, "\(h.queue.overlaps) callbacks began while another was running")
        c.figure("\(records.count) callbacks from 20 countdowns")
    }
}
