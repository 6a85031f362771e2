import CountdownSupport
import Dispatch
import Synchronization
import Testing

@testable import Countdown
@testable import CountdownBenchKit
@testable import CountdownConformance

/// The recommended backend's progress: a deadline and a grid, read from a clock.
@Suite("Deadline track")
struct DeadlineTrackTests {
    @Test("a deadline track frozen by a pause keeps its remaining time and moves its grid and deadline by the pause")
    func pauseKeptInRunningFields() {
        let at = Self.trackMoment
        let second = TickLength(.seconds(1))
        var track = DeadlineTrack(duration: .seconds(5), tick: second, at: at(10))
        #expect(track.advance(at: at(11), intervals: 1, tick: second) == .tick(.seconds(4)))
        track.pause(at: at(11))
        // Frozen, whatever the clocks say; a second pause changes nothing.
        #expect(track.remaining(at: at(40)) == .seconds(4))
        track.pause(at: at(30))
        #expect(track.remaining(at: at(50)) == .seconds(4))
        track.resume(at: at(61))
        // Fifty seconds paused: the next grid point is 12 + 50, the deadline 15 + 50.
        #expect(track.nextFire == at(62).monotonic)
        #expect(track.remaining(at: at(61)) == .seconds(4))
        #expect(track.advance(at: at(62), intervals: 1, tick: second) == .tick(.seconds(3)))
        // A second resume changes nothing.
        track.resume(at: at(63))
        #expect(track.remaining(at: at(64)) == .seconds(1))
        #expect(track.advance(at: at(65), intervals: 1, tick: second) == .finished)
    }

    @Test("the countdown clock is read before the monotonic clock: a pair split by a preemption delays the grid, never the deadline")
    func clockReadBeforeMonotonic() {
        let readAt = Locked<UInt64>(0)
        let clock = CountdownClock(name: "probe", followsWallClock: false) {
            readAt.withLock { $0 = SystemClocks.monotonic() }
            return .seconds(5)
        }
        let runtime = EngineRuntime.system(deliveryQueue: DispatchQueue(label: "test.order"))
        let mechanism = TimestampMechanism(tick: .seconds(1), clock: clock, runtime: runtime)
        defer { mechanism.shutdown() }
        let moment = mechanism.now()
        #expect(moment.clock == 5_000_000_000)
        #expect(moment.monotonic.nanoseconds >= readAt.withLock { $0 }, "the countdown clock was read first")
    }

    @Test("a deadline track names the fire that may finish: the last grid point, not a tick before it")
    func nextFireMayFinish() {
        let at = Self.trackMoment
        let second = TickLength(.seconds(1))
        var track = DeadlineTrack(duration: .seconds(3), tick: second, at: at(0))
        #expect(!track.nextFireMayFinish(tick: second))
        // Each step taken outside `#expect`, which cannot take a mutating call.
        var step = track.advance(at: at(1), intervals: 1, tick: second)
        #expect(step == .tick(.seconds(2)) && !track.nextFireMayFinish(tick: second))
        step = track.advance(at: at(2), intervals: 1, tick: second)
        #expect(step == .tick(.seconds(1)) && track.nextFireMayFinish(tick: second))
        step = track.advance(at: at(3), intervals: 1, tick: second)
        #expect(step == .finished)
    }

    /// A deadline track's instant `seconds` in: the monotonic clock reads 10 s ahead of the
    /// countdown's, so a track that confused the two would be off by that much.
    static func trackMoment(_ seconds: Int64) -> Moment {
        Moment(monotonic: MonotonicInstant(nanoseconds: UInt64(10 + seconds) * 1_000_000_000), clock: seconds * 1_000_000_000)
    }
}
