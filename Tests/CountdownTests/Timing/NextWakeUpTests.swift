import Testing

@testable import Countdown

/// When the ticker wants waking next, as a value: decisions made by hand, no thread.
@Suite("Next wake-up")
struct NextWakeUpTests {
    static func at(_ ms: UInt64) -> MonotonicInstant { MonotonicInstant(nanoseconds: 1_000_000_000 + ms * 1_000_000) }

    @Test("nudges the timer only for an earlier instant, and for any after a wake-up")
    func earlierOnly() {
        var next = NextWakeUp()
        #expect(next.instant == nil)
        // Each decision is made outside `#expect`, which cannot take a mutating call.
        var wakes = next.moveEarlier(to: Self.at(20))
        #expect(wakes && next.instant == Self.at(20))
        wakes = next.moveEarlier(to: Self.at(20))
        #expect(!wakes)
        wakes = next.moveEarlier(to: Self.at(30))
        #expect(!wakes && next.instant == Self.at(20))
        wakes = next.moveEarlier(to: Self.at(10))
        #expect(wakes && next.instant == Self.at(10))
        next.woke()
        #expect(next.instant == nil)
        wakes = next.moveEarlier(to: Self.at(40))
        #expect(wakes && next.instant == Self.at(40))
    }
}
