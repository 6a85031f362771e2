import Foundation
import Testing

@testable import CountdownBenchKit

@Suite struct MemoryProbeTests {
    /// A generator that repeats a short pattern: the cycle must not depend on good randomness.
    struct Counting: RandomNumberGenerator {
        var state: UInt64 = 0
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            return state
        }
    }

    @Test(arguments: [2, 3, 64, 4096])
    func theChaseVisitsEveryLineOnceBeforeComingBack(lines: Int) {
        var random = Counting()
        let next = MemoryProbe.cycle(lines: lines, using: &random)
        var seen = Set<Int>()
        var at = 0
        repeat {
            #expect(seen.insert(at).inserted, "line \(at) visited twice before the chase came back")
            at = next[at]
        } while at != 0 && seen.count <= lines
        #expect(seen.count == lines, "a cycle of \(seen.count) lines out of \(lines)")
    }

    /// The figure is a time per load, not per call: 10 000 loads at that time fit in the time
    /// the call took around them (one-sided: a probe that reported the whole call, or a
    /// made-up figure, would exceed it).
    @Test func aLoadsTimeIsAShareOfTheCall() {
        let loads = 10_000
        let began = DispatchTime.now().uptimeNanoseconds
        let ns = MemoryProbe.nanosecondsPerLoad(bytes: 64 << 10, loads: loads)
        let took = Double(DispatchTime.now().uptimeNanoseconds - began)
        #expect(ns.isFinite && ns > 0, "\(ns) ns a load")
        #expect(ns * Double(loads) <= took, "\(ns) ns a load × \(loads) loads is more than the \(took) ns the call took")
    }

    @Test func memoryTwiceAsSlowIsTold() {
        let quiet = MemoryLatency(smallSetBytes: 4 << 20, largeSetBytes: 64 << 20, smallSetNs: [12, 13], largeSetNs: [150, 152])
        let thrashed = MemoryLatency(smallSetBytes: 4 << 20, largeSetBytes: 64 << 20, smallSetNs: [90, 150], largeSetNs: [220, 270])
        let alike = MemoryLatency(smallSetBytes: 4 << 20, largeSetBytes: 64 << 20, smallSetNs: [14], largeSetNs: [160])
        #expect(quiet.differs(from: thrashed) && thrashed.differs(from: quiet))
        #expect(!quiet.differs(from: alike))
        let note = MemoryText.compared(old: quiet, new: thrashed)
        #expect(note?.contains("12.5 ns (4 MiB) and 151 ns (64 MiB) in OLD, 120 ns and 245 ns in NEW") == true, "\(note ?? "no note")")
    }
}
