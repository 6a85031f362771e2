import Testing

@testable import Countdown

/// The articles' fix for tick counters, on `TickCount` alone with instants made up, so that
/// nothing depends on timing: 2 s at 200 ms ticks, the app sent to the background 500 ms in and
/// frozen 650 ms (no fires), one catch-up fire on the continue, then the foreground.
@Suite("Lifecycle")
struct LifecycleTests {
    static let origin: UInt64 = 1_000_000_000_000
    /// A moment `ms` after the start, and the boot clock's reading then.
    func at(_ ms: Int) -> Moment { Moment(monotonic: MonotonicInstant(nanoseconds: Self.origin + UInt64(ms) * 1_000_000)) }
    func boot(_ ms: Int) -> Int64 { 50_000_000_000 + Int64(ms) * 1_000_000 }
    /// The table's tick, handed to each fire (a count keeps its own).
    static let tick = TickLength(.milliseconds(200))

    func counter() -> TickCount {
        var count = TickCount(duration: .seconds(2), tick: .milliseconds(200), now: at(0).monotonic)
        _ = count.advance(at: at(200), intervals: 1, tick: Self.tick)
        _ = count.advance(at: at(400), intervals: 1, tick: Self.tick)
        return count
    }

    @Test("the foreground takes off the frozen time and puts the counter back on its grid")
    func takesOffTheFrozenTime() {
        var count = counter()
        count.enteredBackground(at: at(500), boot: boot(500))
        // Frozen from 500 to 1150 ms: no fires. The continue brings one catch-up fire.
        _ = count.advance(at: at(1150), intervals: 1, tick: Self.tick)
        #expect(count.remaining(at: at(1160)) == .milliseconds(1390), "a tick counter loses the freeze")
        let step = count.enteredForeground(at: at(1160), boot: boot(1160))
        #expect(step == .tick(.milliseconds(840)))
        #expect(count.remaining(at: at(1160)) == .milliseconds(840))
        #expect(count.nextFire == at(1200).monotonic, "the next fire is the original grid's 1.2 s")
        #expect(count.advance(at: at(1200), intervals: 1, tick: Self.tick) == .tick(.milliseconds(800)))
        for ms in stride(from: 1400, through: 1800, by: 200) { _ = count.advance(at: at(ms), intervals: 1, tick: Self.tick) }
        #expect(count.advance(at: at(2000), intervals: 1, tick: Self.tick) == .finished, "finishes on the original deadline")
    }

    @Test("a deadline that passed in the background finishes at the foreground")
    func deadlinePassed() {
        var count = counter()
        count.enteredBackground(at: at(500), boot: boot(500))
        #expect(count.enteredForeground(at: at(2600), boot: boot(2600)) == .finished)
    }

    @Test("no freeze, nothing to take off; never counts up")
    func nothingLost() {
        var count = counter()
        count.enteredBackground(at: at(450), boot: boot(450))
        _ = count.advance(at: at(600), intervals: 1, tick: Self.tick)
        #expect(count.enteredForeground(at: at(650), boot: boot(650)) == nil)
        #expect(count.remaining(at: at(650)) == .milliseconds(1350))
    }

    @Test("the boot clock decides: a freeze the monotonic clock did not see (the device slept) is taken off too")
    func deviceSleep() {
        var count = counter()
        count.enteredBackground(at: at(500), boot: boot(500))
        // The monotonic clock stood still while the device slept 1 s; the boot clock did not.
        #expect(count.enteredForeground(at: at(510), boot: boot(1510)) == .tick(.milliseconds(490)))
    }

    @Test("paused countdowns, second calls and a foreground alone change nothing")
    func pausedAndRepeated() {
        var paused = counter()
        paused.pause(at: at(450))
        paused.enteredBackground(at: at(500), boot: boot(500))
        #expect(paused.enteredForeground(at: at(1500), boot: boot(1500)) == nil)
        #expect(paused.remaining(at: at(1500)) == .milliseconds(1550))

        var count = counter()
        #expect(count.enteredForeground(at: at(900), boot: boot(900)) == nil, "a foreground with no background")
        count.enteredBackground(at: at(500), boot: boot(500))
        count.enteredBackground(at: at(1000), boot: boot(1000))  // keeps the first
        #expect(count.enteredForeground(at: at(1150), boot: boot(1150)) == .tick(.milliseconds(850)))
        #expect(count.enteredForeground(at: at(1300), boot: boot(1300)) == nil, "the mark is used once")
    }

    /// A table of deadlines (what the timestamp backends run) told of a background and a
    /// foreground 5 s of device sleep later: it marks nothing and tells nothing, where a table of
    /// tick counts marks the background and corrects its countdown at the foreground.
    @Test("a backend that reads a clock skips the hooks; one that counts ticks does not")
    func clocksSkip() throws {
        func run<P: CountdownProgress>(_ table: inout EngineState<P, Int>) throws -> (marked: Bool, told: Int) {
            _ = try table.start(key: "sms-code:+8613800000000", duration: .seconds(2), observer: { _ in }, now: at(0))
            _ = table.pipeline.takePending()
            _ = table.enteredBackground(now: at(500), boot: boot(500))
            let marked = table.isInBackground
            _ = table.enteredForeground(now: at(510), boot: boot(5510))
            return (marked, table.pipeline.takePending().count)
        }
        let rules = EngineState<DeadlineTrack, Int>.Table.Rules(
            tick: .milliseconds(200), maximumDuration: .seconds(60), capacity: nil, arming: .timerPerCountdown(shutdown: .disarmEach))
        var deadlines = EngineState<DeadlineTrack, Int>(rules: rules)
        var counts = EngineState<TickCount, Int>(rules: .init(
            tick: .milliseconds(200), maximumDuration: .seconds(60), capacity: nil, arming: .timerPerCountdown(shutdown: .disarmEach)))
        let clock = try run(&deadlines), counter = try run(&counts)
        #expect(!clock.marked && clock.told == 0, "a deadline table marked the background (\(clock.marked)) or told \(clock.told) event(s)")
        #expect(counter.marked && counter.told == 1, "a tick-count table marked (\(counter.marked)) and told \(counter.told) event(s)")
    }
}
