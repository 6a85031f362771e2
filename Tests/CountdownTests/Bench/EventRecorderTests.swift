import CountdownSupport
import Countdown
import Foundation
import Testing

@testable import CountdownBenchKit

/// The recorder is fed events by hand (no timers), so lateness is checked only as a lower
/// bound: it can be no less than the time that has provably passed since the ideal instant.
@Suite(.dedicatedThread) struct EventRecorderTests {
    let tick = Duration.milliseconds(10), duration = Duration.milliseconds(50)

    @Test func ticksFinishesAndSkippedTicksAreCounted() throws {
        let recorder = EventRecorder(count: 2, tick: tick, duration: duration)
        #expect(recorder.ticksPerCountdown == 4)
        let start = recorder.begin(0, at: SystemClocks.monotonic())
        recorder.record(0, CountdownEvent(key: "a", kind: .tick, remaining: duration))  // the tick at start
        SystemClocks.sleep(untilMonotonic: start + 11_000_000)
        let tick1 = SystemClocks.monotonic()
        recorder.record(0, CountdownEvent(key: "a", kind: .tick, remaining: .milliseconds(40)))
        let tick1End = SystemClocks.monotonic()
        // The timestamp backend's catch-up: remaining says tick 3; tick 2 was skipped.
        SystemClocks.sleep(untilMonotonic: start + 31_000_000)
        let tick3 = SystemClocks.monotonic()
        recorder.record(0, CountdownEvent(key: "a", kind: .tick, remaining: .milliseconds(19)))
        let tick3End = SystemClocks.monotonic()
        SystemClocks.sleep(untilMonotonic: start + 51_000_000)
        recorder.record(0, CountdownEvent(key: "a", kind: .finished, remaining: .zero))
        recorder.record(0, CountdownEvent(key: "a", kind: .finished, remaining: .zero))
        recorder.record(0, CountdownEvent(key: "a", kind: .tick, remaining: .milliseconds(1)))

        #expect(recorder.ticks == 2)
        #expect(recorder.skippedTicks == 2, "tick 2, and tick 4, which the finish came instead of")
        #expect(recorder.doubledFinishes == 1)
        #expect(recorder.eventsAfterFinish == 1)
        #expect(recorder.earlyEvents == 0)
        #expect(recorder.finishedCount.load(ordering: .relaxed) == 1)
        let startDelay = try #require(recorder.startDelay.percentile(100)).nanoseconds
        #expect(startDelay >= tick1 - (start + 10_000_000) && startDelay <= tick1End - (start + 10_000_000))
        // Tick 3 judged against start + 3T (judged against 2T it would be 10 ms later).
        let latest = try #require(recorder.tickLateness.percentile(100)).nanoseconds
        #expect(latest >= tick3 - (start + 30_000_000))
        #expect(latest <= max(tick1End - (start + 10_000_000), tick3End - (start + 30_000_000)))
        #expect(try #require(recorder.finishError.percentile(50)).nanoseconds >= 1_000_000)
    }

    /// A stall past the deadline: the timestamp backend's next fire finds the countdown over and
    /// delivers the finish alone, so the grid points between its last tick and the deadline are
    /// never ticked. They are skipped ticks, counted at the finish: every grid point before the
    /// deadline is either heard or counted as skipped (a 60 ms run at 20 ms ticks lost count of
    /// one such tick in fifty).
    @Test func ticksAFinishCameInsteadOfAreCountedAsSkipped() {
        let recorder = EventRecorder(count: 3, tick: tick, duration: duration)
        #expect(recorder.ticksPerCountdown == 4)
        let start = recorder.begin(0, at: SystemClocks.monotonic())
        _ = recorder.begin(1, at: start)
        _ = recorder.begin(2, at: start)
        for index in 0..<3 { recorder.record(index, CountdownEvent(key: "\(index)", kind: .tick, remaining: duration)) }
        // 0 hears ticks 1 and 2, then its finish: ticks 3 and 4 skipped. 1 hears only the tick at
        // start, then its finish: all four skipped. 2 hears every tick: none skipped.
        for k in 1...4 {
            SystemClocks.sleep(untilMonotonic: start + UInt64(k) * 10_000_000 + 1_000_000)
            for index in (k <= 2 ? [0, 2] : [2]) {
                recorder.record(index, CountdownEvent(key: "\(index)", kind: .tick, remaining: .milliseconds(50 - 10 * k)))
            }
        }
        SystemClocks.sleep(untilMonotonic: start + 51_000_000)
        for index in 0..<3 { recorder.record(index, CountdownEvent(key: "\(index)", kind: .finished, remaining: .zero)) }
        #expect(recorder.finishedCount.load(ordering: .relaxed) == 3)
        #expect(recorder.earlyEvents == 0)
        #expect(recorder.ticks == 6)
        #expect(recorder.skippedTicks == 2 + 4)
        #expect(recorder.ticks + recorder.skippedTicks == 3 * recorder.ticksPerCountdown)
    }

    /// A backend that reads its clock and the monotonic clock as one instant may place its
    /// deadline a few tens of µs off its grid (half the split it allows between the readings):
    /// remaining then names the grid point before the one the tick is for. It is charged to its
    /// own grid point, not to the one before, a tick late.
    @Test func aRemainingSlightlyAboveItsGridPointNamesThatGridPoint() throws {
        let recorder = EventRecorder(count: 1, tick: tick, duration: duration)
        let start = recorder.begin(0, at: SystemClocks.monotonic())
        recorder.record(0, CountdownEvent(key: "a", kind: .tick, remaining: duration))
        SystemClocks.sleep(untilMonotonic: start + 11_000_000)
        recorder.record(0, CountdownEvent(key: "a", kind: .tick, remaining: .milliseconds(40)))
        let tick1End = SystemClocks.monotonic()
        SystemClocks.sleep(untilMonotonic: start + 21_000_000)
        recorder.record(0, CountdownEvent(key: "a", kind: .tick, remaining: .milliseconds(30) + .microseconds(30)))
        let tick2End = SystemClocks.monotonic()

        #expect(recorder.ticks == 2)
        #expect(recorder.repeatedGridPoints == 0)
        #expect(recorder.skippedTicks == 0)
        // Judged against start + 2T; against T it would be at least 11 ms late.
        let latest = try #require(recorder.tickLateness.percentile(100)).nanoseconds
        #expect(latest <= max(tick1End - (start + 10_000_000), tick2End - (start + 20_000_000)))
    }

    @Test func anEarlyTickIsCaught() {
        let recorder = EventRecorder(count: 1, tick: .seconds(10), duration: .seconds(60))
        _ = recorder.begin(0, at: SystemClocks.monotonic())
        recorder.record(0, CountdownEvent(key: "a", kind: .tick, remaining: .seconds(60)))
        recorder.record(0, CountdownEvent(key: "a", kind: .tick, remaining: .seconds(50)))  // due in 10 s
        recorder.record(0, CountdownEvent(key: "a", kind: .finished, remaining: .zero))  // due in 60 s
        #expect(recorder.earlyEvents == 2)
        #expect(recorder.earliest < -9_000_000_000)
    }

    @Test func whatTheTimeLimitCutOffIsChargedAsLate() throws {
        let recorder = EventRecorder(count: 3, tick: tick, duration: duration)
        let start = recorder.begin(0, at: SystemClocks.monotonic())
        _ = recorder.begin(1, at: SystemClocks.monotonic())
        recorder.record(0, CountdownEvent(key: "a", kind: .tick, remaining: duration))
        recorder.close()
        recorder.record(0, CountdownEvent(key: "a", kind: .finished, remaining: .zero))  // after close: ignored
        #expect(recorder.finishedCount.load(ordering: .relaxed) == 0)
        recorder.censor(at: start + 100_000_000)
        // Two countdowns started, four ticks and a finish each were due: all censored.
        #expect(recorder.tickLateness.censoredCount == 8)
        #expect(recorder.finishError.censoredCount == 2)
        #expect(recorder.startDelay.censoredCount == 2)
        #expect(recorder.startedCount == 2 && recorder.neverTicked == 2)
        let p50 = try #require(recorder.tickLateness.percentile(50))
        #expect(p50.isLowerBound && p50.nanoseconds >= 50_000_000 * 98 / 100, "\(p50)")
    }
}
