import Countdown
import CountdownSupport
import Dispatch
import Foundation

/// The `calls-from-observer` check: `cancel`, `pause` and a replacing `start`, each called from
/// inside an observer of the countdown itself (on the delivery queue, where they are exact), end
/// what that countdown tells: nothing more is delivered to any observer of it, its own included,
/// not even ticks already queued behind the call (they pile up behind a held queue first).
enum CallsFromObserverCheck {
    static let check = ConformanceCheck(
        "calls-from-observer", .contract,
        "cancel, pause and a replacing start called from inside the countdown's own observer: nothing more reaches it",
        body: run)

    enum Call: String, CaseIterable { case cancel, pause, replace = "replacing start" }

    static func run(_ c: CheckContext) throws {
        let tick = Duration.milliseconds(20)
        let h = try c.makeScheduler(tick: tick)
        let s = h.scheduler
        var figures: [String] = []
        for call in Call.allCases {
            let key = "from-observer:\(call)"
            let log = h.recorder(), successor = h.recorder()
            let record = log.observer
            /// The queue's count when the call returned, inside the observer.
            let line = Locked<UInt64?>(nil)
            let answer = Locked<String?>(nil)
            try s.start(key: key, duration: h.longCountdown) { event in
                record(event)
                // The third event: the first of those that piled up behind the held queue.
                guard log.count == 3, line.withLock({ $0 }) == nil else { return }
                let said: String
                switch call {
                case .cancel: said = "\(s.cancel(key: key))"
                case .pause: said = "\(s.pause(key: key))"
                case .replace: said = (try? s.start(key: key, duration: h.longCountdown, observer: successor.observer)).map { "\($0)" } ?? "threw"
                }
                line.withLock { $0 = h.queue.nextSequence() }
                answer.withLock { $0 = said }
            }
            _ = log.wait { $0.count >= 2 }
            h.holding { h.settle(tick * 4) }  // ticks queue up behind the hold
            guard c.expect(h.waitUntil { line.withLock { $0 } != nil }, "\(call): the observer never got to make its call") else { continue }
            h.settle(tick * 5)
            h.drain()
            let returned = line.withLock { $0 }!, said = answer.withLock { $0 } ?? "nothing"
            let late = log.all.filter { $0.sequence > returned }
            c.expect(late.isEmpty, "\(call) from its own observer answered \(said), then \(late.count) more events reached that observer: \(late.map { EventRules.describe($0.event) })")
            switch call {
            case .cancel:
                c.expect(said == "true", "cancel from its own observer answered \(said)")
                c.expect(s.remaining(key: key) == nil, "cancel from its own observer left the countdown running")
            case .pause:
                c.expect(said == "true", "pause from its own observer answered \(said)")
                let frozen = s.remaining(key: key)
                h.settle(tick * 3)
                c.expect(frozen != nil && s.remaining(key: key) == frozen, "pause from its own observer did not freeze the countdown")
                _ = s.cancel(key: key)
            case .replace:
                c.expect(said.hasPrefix("attached"), "a replacing start from its own observer answered \(said)")
                c.expect(!successor.all.isEmpty, "the observer attached from inside the old one heard nothing")
                _ = s.cancel(key: key)
            }
            figures.append("\(call): \(late.count) after")
        }
        c.figure(figures.joined(separator: ", "))
    }
}
