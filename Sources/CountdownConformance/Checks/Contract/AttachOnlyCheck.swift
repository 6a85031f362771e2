import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `attach-only` check: attach(key:) attaches to a running countdown and never starts one.
enum AttachOnlyCheck {
    static let check = ConformanceCheck(
        "attach-only", .contract,
        "attach(key:) attaches to a running countdown and never starts one",
        body: run)

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(20))
        let stray = h.recorder()
        let none = h.scheduler.attach(key: "sms", observer: stray.observer)
        c.expect(none == nil, "attach(key:) on an unknown key returned \(String(describing: none))")
        c.expect(h.scheduler.activeCount == 0, "attach(key:) on an unknown key started a countdown")
        let first = h.recorder(), second = h.recorder()
        try h.scheduler.start(key: "sms", duration: .seconds(3), observer: first.observer)
        _ = first.wait { $0.count >= 5 }
        let (told, firstCount) = h.queue.queue.sync {
            (h.scheduler.attach(key: "sms", observer: second.observer), first.count)
        }
        guard let told else {
            c.fail("attach(key:) on a running countdown returned nil")
            return
        }
        c.expect(told > .zero && told <= .seconds(3) - .milliseconds(80) + .milliseconds(1),
                 "attach(key:) told \(told) after at least four ticks of a 3 s countdown")
        _ = second.wait { $0.count >= 3 }
        h.queue.drain()
        c.expect(second.all.first?.event == CountdownEvent(key: "sms", kind: .tick, remaining: told),
                 "the attached observer's first event is not tick(\(told))")
        c.expect(first.count == firstCount, "the replaced observer kept hearing")
        EventRules.wellFormed(second.all, "attached", in: c)
        settle(.milliseconds(50))
        c.expect(stray.count == 0, "the observer of an attach to nothing was called")
    }
}
