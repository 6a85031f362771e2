import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `profile.capacity` check: the declared capacity is honoured and the next start throws; nothing is dropped.
enum ProfileCapacityCheck {
    static let check = ConformanceCheck(
        "profile.capacity", .profile,
        "the declared capacity is honoured and the next start throws; nothing is dropped",
        needsRealWorld: "it measures lateness under a real load",
        body: run)

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(50))
        let declared = h.scheduler.profile.capacity
        let count = declared ?? 500
        let duration = min(.seconds(5), h.scheduler.profile.maximumDuration)
        let logs = (0..<count).map { _ in h.recorder() }
        var accepted = 0
        for (i, log) in logs.enumerated() {
            do {
                let outcome = try h.scheduler.start(key: "c\(i)", duration: duration, observer: log.observer)
                if c.expect(outcome == .started, "start \(i + 1) of \(count) returned \(outcome)") { accepted += 1 }
            } catch {
                c.fail("start \(i + 1) of \(count) threw \(error), within the declared capacity \(declared.map(String.init) ?? "(none)")")
            }
        }
        // Accepted means running: every one is listed and has had its first tick.
        c.expectEqual(h.scheduler.activeCount, accepted, "activeCount", "after \(accepted) accepted starts")
        let ticked = h.waitUntil { logs.allSatisfy { $0.count >= 1 } }
        c.expect(ticked, "\(logs.filter { $0.count == 0 }.count) accepted countdowns never ticked: dropped")
        guard let capacity = declared else {
            c.figure("\(accepted) countdowns accepted; no declared capacity")
            return
        }
        let overflow = h.recorder()
        do {
            let outcome = try h.scheduler.start(key: "overflow", duration: duration, observer: overflow.observer)
            c.fail("start beyond the declared capacity of \(capacity) returned \(outcome) instead of throwing")
        } catch {
            c.expect(error == .capacityExceeded(capacity: capacity), "start beyond capacity threw \(error)")
        }
        h.settle(.milliseconds(100))
        c.expect(overflow.count == 0, "the refused countdown's observer was called")
        c.expectEqual(h.scheduler.activeCount, capacity, "activeCount", "after a refused start")
        c.figure("\(accepted) accepted; start \(capacity + 1) refused with capacityExceeded")
    }
}
