import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// What tells the strategies apart, observed in-process and compared with what each backend
/// declares in its `CountdownProfile`. (A frozen process is observed by `countdown-bench suspend`.)
enum ProfileChecks {
    static let all: [ConformanceCheck] = [
        .init("profile.wall-clock", .profile, "an hour's change of the wall clock moves the countdown exactly when the backend declares it", body: wallClock),
        .init("profile.slow-observer", .profile, "an observer that blocks the delivery queue stalls the other countdowns only when declared", body: slowObserver),
        .init("profile.drift", .profile, "the finish error grows with the countdown's length only when declared", body: drift),
        .init("profile.capacity", .profile, "the declared capacity is honoured and the next start throws; nothing is dropped", body: capacity),
    ]

    static func wallClock(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(20))
        let declared = h.scheduler.profile.wallClockJump
        let duration = min(.seconds(60), h.scheduler.profile.maximumDuration)

        let forward = h.recorder()
        try h.scheduler.start(key: "forward", duration: duration, observer: forward.observer)
        _ = forward.wait { $0.count >= 3 }
        let jumpedAt = SystemClocks.monotonic()
        h.wallClock.move(by: .seconds(3600))
        let moved = forward.waitForFinish(timeout: .seconds(2))
        h.wallClock.move(by: .seconds(-3600))
        let observed: CountdownProfile.WallClockJump = moved ? .movesCountdown : .immune
        if moved, let finish = forward.finishes.first {
            c.figure("an hour forward: finished \(DurationText.nanoseconds(Double(finish.at - jumpedAt))) later, \(duration) early")
        } else {
            c.figure("an hour forward: still running 2 s later")
        }
        c.expect(observed == declared, "declares \(declared.rawValue), but observed \(observed.rawValue)")

        // Set back: whatever the profile, a countdown never counts up.
        let back = h.recorder()
        try h.scheduler.start(key: "back", duration: duration, observer: back.observer)
        _ = back.wait { $0.count >= 3 }
        let before = back.count
        h.wallClock.move(by: .seconds(-3600))
        c.expect(back.wait(timeout: .seconds(5)) { $0.count >= before + 10 } || declared == .movesCountdown,
                 "ticks stopped after the wall clock was set back, though declared immune")
        h.wallClock.move(by: .seconds(3600))
        h.queue.drain()
        EventRules.wellFormed(back.all, "set back", in: c)
    }

    static func slowObserver(_ c: CheckContext) throws {
        // A 50 ms tick: a stall of the machine shorter than that costs a tick-counting backend
        // nothing, so only the blocked observer can make the others late.
        let tick = Duration.milliseconds(50)
        let h = try c.makeScheduler(tick: tick)
        let declared = h.scheduler.profile.slowObserver
        let block = Duration.milliseconds(400), duration = Duration.seconds(3)
        let others = (0..<5).map { _ in h.recorder() }
        let window = Locked<(start: UInt64, end: UInt64)?>(nil)
        try h.scheduler.start(key: "slow", duration: .seconds(10)) { _ in
            // Once every other countdown has delivered its first fire, one of this observer's
            // ticks holds the delivery queue, as a slow observer on the main queue would. Each
            // other countdown is then measured from a fire the block cannot have delayed.
            guard window.withLock({ $0 == nil }), others.allSatisfy({ $0.count >= 2 }) else { return }
            let start = SystemClocks.monotonic()
            settle(block)
            window.withLock { $0 = (start, SystemClocks.monotonic()) }
        }
        for (i, log) in others.enumerated() {
            try h.scheduler.start(key: "k\(i)", duration: duration, observer: log.observer)
        }
        guard c.expect(waitUntil { others.allSatisfy { !$0.finishes.isEmpty } }, "the other countdowns never finished"),
              let (blockStart, blockEnd) = window.withLock({ $0 })
        else {
            c.fail("the slow observer was never called after the others' first fires")
            return
        }
        var lateness: [Int64] = []
        for log in others {
            let ticks = log.ticks
            guard ticks.count >= 2, let finish = log.finishes.first, ticks[1].at < blockStart else { continue }
            let deadline = ticks[1].at + nanoseconds(duration - tick)
            // A countdown whose deadline the block covered cannot tell a stall from a delay.
            guard blockEnd < deadline else { continue }
            // Timing kept: the block ends before the deadline, so the finish is on time.
            // Counting stalled: the finish comes about the block's length late.
            lateness.append(Int64(finish.at) - Int64(deadline))
        }
        guard let worst = lateness.max() else {
            c.inconclusive("no countdown fired before the block and finished after it")
            return
        }
        c.figure("one observer blocked the delivery queue \(DurationText.nanoseconds(Double(blockEnd - blockStart))); the others finished up to \(DurationText.nanoseconds(Double(worst))) late")
        let observed: CountdownProfile.SlowObserver
        switch worst {
        case ..<150_000_000: observed = .delaysDeliveryOnly
        case 300_000_000...: observed = .stallsCountdowns
        default:
            c.inconclusive("finishes \(DurationText.nanoseconds(Double(worst))) late: between on time and the block's length")
            return
        }
        c.expect(observed == declared, "declares \(declared.rawValue), but observed \(observed.rawValue)")
    }

    static func drift(_ c: CheckContext) throws {
        // A 20 ms tick: to lose a tick a tick-counting backend must stall 20 ms, which a few
        // milliseconds of delivery jitter cannot hide from the stall test below.
        let tick = Duration.milliseconds(20)
        let h = try c.makeScheduler(tick: tick)
        let declared = h.scheduler.profile.drift
        let short = Duration.milliseconds(200), long = Duration.milliseconds(1800)
        var errors: [Duration: [Int64]] = [short: [], long: []]
        var disturbed = 0
        // One countdown at a time, measured from its first fire, so that a worker that starts
        // late is not mistaken for drift. A round in which ticks arrive more than two ticks apart
        // was stalled: a tick-counting backend loses the ticks of a stall (the suspension
        // profile, not drift), so the round is left out.
        for round in 0..<5 {
            for duration in [short, long] {
                let log = h.recorder()
                try h.scheduler.start(key: "d\(round)-\(duration)", duration: duration, observer: log.observer)
                guard c.expect(log.waitForFinish(), "a \(duration) countdown never finished") else { return }
                let ticks = log.ticks
                guard ticks.count >= 2, let finish = log.finishes.first else { continue }
                let arrivals = ticks.dropFirst().map(\.at) + [finish.at]
                let widest = zip(arrivals, arrivals.dropFirst()).map { $1 - $0 }.max() ?? 0
                guard widest <= 2 * nanoseconds(tick) else {
                    disturbed += 1
                    continue
                }
                let ideal = ticks[1].at + nanoseconds(duration - tick)
                let error = Int64(finish.at) - Int64(ideal)
                // Three quarters of a tick late or more: a tick was lost in a stall whose gap the
                // delivery jitter hid (drift builds up microseconds per tick, a lost tick costs a
                // whole tick; 80 ticks of the worst drift seen on a loaded 2-core VM stay under 13 ms).
                guard error < Int64(nanoseconds(tick)) * 3 / 4 else {
                    disturbed += 1
                    continue
                }
                errors[duration, default: []].append(error)
            }
        }
        func median(_ values: [Int64]) -> Int64 { values.sorted()[values.count / 2] }
        guard let shortErrors = errors[short], let longErrors = errors[long], !shortErrors.isEmpty, !longErrors.isEmpty else {
            c.inconclusive("every round of one length was stalled (\(disturbed) of 10 rounds)")
            return
        }
        let extraTicks = Double((long - short) / tick)
        let slope = Double(median(longErrors) - median(shortErrors)) / extraTicks  // ns per tick
        c.figure(String(format: "finish error grows %.1f µs per tick (median %@ at %@, %@ at %@; %d of 10 rounds stalled)",
                        slope / 1000, DurationText.nanoseconds(Double(median(shortErrors))), "\(short)", DurationText.nanoseconds(Double(median(longErrors))), "\(long)",
                        disturbed))
        let observed: CountdownProfile.Drift
        switch slope {
        case ..<10_000: observed = .bounded
        case 20_000...: observed = .accumulates
        default:
            c.inconclusive(String(format: "%.1f µs per tick: between bounded (< 10) and accumulating (≥ 20)", slope / 1000))
            return
        }
        c.expect(observed == declared, "declares \(declared.rawValue), but observed \(observed.rawValue)")
    }

    static func capacity(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(50))
        let declared = h.scheduler.profile.capacity
        let count = declared ?? 500
        let duration = min(.seconds(5), h.scheduler.profile.maximumDuration)
        let logs = (0..<count).map { _ in h.recorder() }
        var accepted = 0
        for (i, log) in logs.enumerated() {
            do {
                let outcome = try h.scheduler.start(key: "c\(i)", duration: duration, observer: log.observer)
                if c.expect(outcome == .started, "start \(i + 1) of \(count) returned \(outcome)") { accepted += 1 }
            } catch {
                c.fail("start \(i + 1) of \(count) threw \(error), within the declared capacity \(declared.map(String.init) ?? "(none)")")
            }
        }
        // Accepted means running: every one is listed and has had its first tick.
        c.expect(h.scheduler.activeCount == accepted, "activeCount is \(h.scheduler.activeCount) after \(accepted) accepted starts")
        let ticked = waitUntil { logs.allSatisfy { $0.count >= 1 } }
        c.expect(ticked, "\(logs.filter { $0.count == 0 }.count) accepted countdowns never ticked: dropped")
        guard let capacity = declared else {
            c.figure("\(accepted) countdowns accepted; no declared capacity")
            return
        }
        let overflow = h.recorder()
        do {
            let outcome = try h.scheduler.start(key: "overflow", duration: duration, observer: overflow.observer)
            c.fail("start beyond the declared capacity of \(capacity) returned \(outcome) instead of throwing")
        } catch {
            c.expect(error == .capacityExceeded(capacity: capacity), "start beyond capacity threw \(error)")
        }
        settle(.milliseconds(100))
        c.expect(overflow.count == 0, "the refused countdown's observer was called")
        c.expect(h.scheduler.activeCount == capacity, "activeCount is \(h.scheduler.activeCount) after a refused start")
        c.figure("\(accepted) accepted; start \(capacity + 1) refused with capacityExceeded")
    }
}
