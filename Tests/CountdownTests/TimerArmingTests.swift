import Testing

@testable import Countdown

/// The ticker's arming as a value: decisions and arms interleaved by hand, no timer.
@Suite("Timer arming")
struct TimerArmingTests {
    static func at(_ ms: UInt64) -> MonotonicInstant { MonotonicInstant(nanoseconds: 1_000_000_000 + ms * 1_000_000) }

    /// Runs a mutating call outside `#require`, which cannot mutate what it is given.
    static func made(_ call: () -> TimerArming.Arm?) -> TimerArming.Arm? { call() }

    /// Two decisions, neither armed yet: for 30 ms, then for the earlier 20 ms.
    static func decidedTwice() throws -> (TimerArming, later: TimerArming.Arm, earlier: TimerArming.Arm) {
        var arming = TimerArming()
        let later = try #require(made { arming.arm(ifEarlier: at(30)) })
        let earlier = try #require(made { arming.arm(ifEarlier: at(20)) })
        return (arming, later, earlier)
    }

    @Test("arms only for an earlier instant, and again after a fire")
    func earlierOnly() throws {
        var arming = TimerArming()
        let first = try #require(Self.made { arming.arm(ifEarlier: Self.at(20)) })
        #expect(first.instant == Self.at(20))
        #expect(arming.armed(first) == nil)
        #expect(arming.arm(ifEarlier: Self.at(20)) == nil)
        #expect(arming.arm(ifEarlier: Self.at(30)) == nil)
        let earlier = try #require(Self.made { arming.arm(ifEarlier: Self.at(10)) })
        #expect(earlier.instant == Self.at(10))
        #expect(arming.armed(earlier) == nil)
        #expect(arming.armedFor == Self.at(10))
        arming.fired()
        #expect(arming.armedFor == nil)
        let after = try #require(Self.made { arming.arm(ifEarlier: Self.at(40)) })
        #expect(after.instant == Self.at(40))
    }

    @Test("arms made in the order decided need nothing more")
    func inOrder() throws {
        let (decided, a, b) = try Self.decidedTwice()
        var arming = decided
        #expect(arming.armed(a) == nil)
        #expect(arming.armed(b) == nil)
        #expect(arming.armedFor == Self.at(20))
    }

    @Test("an earlier decision armed after a later one is armed again with the latest")
    func outOfOrder() throws {
        let (decided, a, b) = try Self.decidedTwice()
        var arming = decided
        // b reached the timer first; a then overwrote it with 30 ms.
        #expect(arming.armed(b) == nil)
        let again = try #require(Self.made { arming.armed(a) })
        #expect(again.instant == Self.at(20))
        // Nothing overtook the repeat: done.
        #expect(arming.armed(again) == nil)
        #expect(arming.armedFor == Self.at(20))
    }

    @Test("a stale arm after the timer fired and found nothing asks for nothing")
    func staleAfterFire() throws {
        let (decided, a, b) = try Self.decidedTwice()
        var arming = decided
        #expect(arming.armed(b) == nil)
        arming.fired()
        #expect(arming.armed(a) == nil)
        #expect(arming.armedFor == nil)
    }
}
