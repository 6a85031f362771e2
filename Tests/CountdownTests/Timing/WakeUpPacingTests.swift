import Testing

@testable import Countdown

/// The ticker's pacing as a value: wake-ups at made-up instants, no timers.
@Suite("Wake-up pacing")
struct WakeUpPacingTests {
    static func at(_ us: UInt64) -> MonotonicInstant { MonotonicInstant(nanoseconds: 1_000_000_000 + us * 1_000) }

    /// Wake-ups every `step` µs up to `end` µs: 300 µs apart (sparse), or 20 µs apart for 9 ms
    /// (dense, but for less than the sustain).
    @Test("a sparse stream, or a dense run shorter than the sustain, is never held back",
          arguments: [(step: 300, end: 100_000), (step: 20, end: 9_000)])
    func notHeldBack(step: Int, end: Int) {
        var pacing = WakeUpPacing()
        #expect(pacing.earliest(Self.at(0)) == Self.at(0))
        for us in stride(from: 0, through: end, by: step) { pacing.wokeUp(at: Self.at(UInt64(us))) }
        #expect(!pacing.isHoldingApart)
        #expect(pacing.earliest(Self.at(UInt64(end + 1))) == Self.at(UInt64(end + 1)))
    }

    @Test("a sustained dense stream is held 50 µs apart, never earlier than asked, and let go after a gap")
    func sustained() {
        var pacing = WakeUpPacing()
        for us in stride(from: 0, through: 10_020, by: 20) { pacing.wokeUp(at: Self.at(UInt64(us))) }
        #expect(pacing.isHoldingApart)
        // Last wake-up at 10 020 µs: an instant due 1 µs later waits until 10 070 µs.
        #expect(pacing.earliest(Self.at(10_021)) == Self.at(10_070))
        // One due after the window is not moved.
        #expect(pacing.earliest(Self.at(10_500)) == Self.at(10_500))
        // Held apart, wake-ups 60 µs apart keep the stream dense.
        for us in stride(from: 10_080, through: 20_000, by: 60) { pacing.wokeUp(at: Self.at(UInt64(us))) }
        #expect(pacing.isHoldingApart)
        // A gap wider than a dense one ends it: a new run must last the sustain again.
        pacing.wokeUp(at: Self.at(30_000))
        #expect(!pacing.isHoldingApart)
        #expect(pacing.earliest(Self.at(30_001)) == Self.at(30_001))
    }
}
