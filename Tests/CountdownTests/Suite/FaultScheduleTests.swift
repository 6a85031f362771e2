@testable import CountdownConformance
import Testing

/// The suite's proxy hits about every n-th answer at random gaps, so that no client loop of fixed
/// length falls in step with it (a fixed sixth of a three-call loop is always its third call: the
/// fresh-clone CI saw a broken inbox reader pass `fleet.faults` because its blocking read was never hit).
@Suite("Fault schedule")
struct FaultScheduleTests {
    /// Which of `count` answers of one connection the fault hits.
    static func hits(_ fault: FaultProxy.Fault, count: Int) -> [Int] {
        var untilHit: Int?
        return (0..<count).filter { _ in fault.hits(&untilHit) }
    }

    @Test("about one answer in n is hit, and every call of a three-call loop is hit")
    func everyPositionHit() {
        let hit = Self.hits(.dropAnswers(every: 6), count: 60_000)
        #expect((9_000...11_000).contains(hit.count), "\(hit.count) hits in 60 000 answers, not about 10 000")
        let positions = Dictionary(grouping: hit) { $0 % 3 }.mapValues(\.count)
        for position in 0..<3 {
            #expect(positions[position, default: 0] > 1_000, "call \(position + 1) of a three-call loop was hit \(positions[position, default: 0]) times")
        }
    }

    @Test("every 1 hits every answer; a probability of zero hits none")
    func edges() {
        #expect(Self.hits(.dropAnswers(every: 1), count: 100).count == 100)
        #expect(Self.hits(.dropAnswers(probability: 0), count: 100).isEmpty)
    }
}
