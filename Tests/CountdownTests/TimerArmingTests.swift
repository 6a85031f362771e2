import Testing

@testable import Countdown

/// The ticker's arming as a value: decisions made by hand, no thread.
@Suite("Timer arming")
struct TimerArmingTests {
    static func at(_ ms: UInt64) -> MonotonicInstant { MonotonicInstant(nanoseconds: 1_000_000_000 + ms * 1_000_000) }

    @Test("wakes the thread only for an earlier instant, and for any after a fire")
    func earlierOnly() {
        var arming = TimerArming()
        #expect(arming.armedFor == nil)
        // Each decision is made outside `#expect`, which cannot take a mutating call.
        var wakes = arming.arm(ifEarlier: Self.at(20))
        #expect(wakes && arming.armedFor == Self.at(20))
        wakes = arming.arm(ifEarlier: Self.at(20))
        #expect(!wakes)
        wakes = arming.arm(ifEarlier: Self.at(30))
        #expect(!wakes && arming.armedFor == Self.at(20))
        wakes = arming.arm(ifEarlier: Self.at(10))
        #expect(wakes && arming.armedFor == Self.at(10))
        arming.fired()
        #expect(arming.armedFor == nil)
        wakes = arming.arm(ifEarlier: Self.at(40))
        #expect(wakes && arming.armedFor == Self.at(40))
    }
}
