import Countdown
import Testing

@testable import CountdownConformance

/// The rules every observer's events obey, as the suite and the package's own tests both judge
/// them (one function): each breach found, in words, and nothing in a well-formed list.
@Suite("Event rules")
struct EventRulesTests {
    static func records(_ events: [(CountdownEvent.Kind, Duration)]) -> [Recorder.Record] {
        events.enumerated().map { index, event in
            Recorder.Record(event: CountdownEvent(key: "k", kind: event.0, remaining: event.1), at: UInt64(index), onDeliveryQueue: true, sequence: UInt64(index))
        }
    }

    @Test("a well-formed list has no breach")
    func wellFormed() {
        #expect(EventRules.violations(of: Self.records([(.tick, .seconds(3)), (.tick, .seconds(2)), (.tick, .seconds(2)), (.finished, .zero)]), "k").isEmpty)
    }

    @Test("each breach is found and said")
    func breaches() {
        let found = EventRules.violations(
            of: Self.records([(.tick, .seconds(2)), (.tick, .seconds(3)), (.tick, .zero), (.finished, .seconds(1)), (.tick, .seconds(1))]), "k")
        #expect(found.count == 5, "\(found)")  // the tick after the finish also rose from the zero tick
        #expect(found.contains { $0.contains("remaining rose from 2.0 seconds to 3.0 seconds") }, "\(found)")
        #expect(found.contains { $0.contains("a tick carries 0.0 seconds") }, "\(found)")
        #expect(found.contains { $0.contains("the finish carries 1.0 seconds") }, "\(found)")
        #expect(found.contains { $0.contains("after the finish") }, "\(found)")
    }
}
