import Testing

@testable import CountdownConformance

/// `one-key` and `fleet.one-key` judge concurrent starts by the instants the calls began and
/// returned: a second `.started` is a failure only when both calls were made while the first
/// countdown could not yet have run out. Values, no time.
@Suite struct StartRaceTests {
    static let ms: UInt64 = 1_000_000

    func race(_ attempts: [(String, UInt64, UInt64)], duration: UInt64 = 60 * ms) -> StartRace {
        StartRace(attempts: attempts.map { .init(answer: $0.0, begin: $0.1 * Self.ms, end: $0.2 * Self.ms) }, duration: duration)
    }

    @Test func oneStartedOfConcurrentStartsHolds() {
        let r = race([("started", 0, 2), ("attached(0.059 s)", 0, 3), ("attached(0.058 s)", 1, 3)])
        #expect(r.violation(describing: "round 0") == nil)
        #expect(r.overlapped)
    }

    @Test func twoStartedWithinTheCountdownAreOneTooMany() throws {
        let r = race([("started", 0, 2), ("started", 1, 4), ("attached(0.059 s)", 0, 3)])
        let message = try #require(r.violation(describing: "round 0: 3 concurrent starts of one key"))
        #expect(message.contains("2 .started, not one"))
    }

    /// Calls one after another are no excuse: the first countdown still ran when the second began.
    @Test func twoStartedOneAfterAnotherWithinTheCountdownAreOneTooMany() {
        #expect(race([("started", 0, 1), ("started", 2, 3)]).violation(describing: "r") != nil)
    }

    /// What a loaded machine did in the issue: the eight starts spread over more than the 60 ms
    /// countdown; the second `.started` came after the first countdown could have run out.
    @Test func aSecondStartedAfterTheCountdownCouldHaveEndedIsTheContractsAnswer() {
        let r = race([("started", 0, 1), ("attached(0.052 s)", 8, 9), ("started", 65, 70), ("attached(0.058 s)", 66, 70)])
        #expect(r.violation(describing: "round 3") == nil)
        #expect(!r.overlapped)
    }

    @Test func noStartedOrAThrowIsAFailure() {
        #expect(race([("attached(0.059 s)", 0, 1), ("attached(0.058 s)", 0, 2)]).violation(describing: "r") != nil)
        #expect(race([("started", 0, 1), ("threw unavailable", 0, 2)]).violation(describing: "r") != nil)
    }

    /// In virtual time the clock does not move while the threads call: every pair is within the
    /// countdown, so any second `.started` fails.
    @Test func inVirtualTimeEveryPairIsWithinTheCountdown() {
        #expect(race([("started", 5, 5), ("started", 5, 5)]).violation(describing: "r") != nil)
    }
}
