import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `profile.slow-observer` check: an observer that blocks the delivery queue stalls the other countdowns only when declared.
enum ProfileSlowObserverCheck {
    static let check = ConformanceCheck(
        "profile.slow-observer", .profile,
        "an observer that blocks the delivery queue stalls the other countdowns only when declared",
        needsRealWorld: "it blocks the delivery queue while real time passes",
        body: run)

    /// What one attempt came to: a verdict recorded (pass or fail), or no verdict, and why.
    enum Attempt {
        case judged
        case undecided(String)
    }

    /// Up to three attempts, each on fresh schedulers: one that cannot tell (the process
    /// stalled under its control, say, on a loaded machine) is made again, and only a run with
    /// a clean control judges. Three undecided attempts are inconclusive, with their reasons.
    static func run(_ c: CheckContext) throws {
        var reasons: [String] = []
        for _ in 0..<3 {
            switch try attempt(c) {
            case .judged: return
            case .undecided(let why): reasons.append(why)
            }
        }
        c.inconclusive("three attempts could not tell: " + reasons.joined(separator: "; "))
    }

    static func attempt(_ c: CheckContext) throws -> Attempt {
        // A 50 ms tick: a stall of the machine shorter than that costs a tick-counting backend
        // nothing, so only the blocked observer can make the others late.
        let tick = Duration.milliseconds(50)
        let h = try c.makeScheduler(tick: tick)
        let declared = h.scheduler.profile.slowObserver
        let block = Duration.milliseconds(400), duration = Duration.seconds(3)
        // Late by less than this (ns), a finish kept its time; by 300 ms or more, it lost the block's.
        let onTime: Int64 = 150_000_000
        let others = (0..<5).map { _ in h.recorder() }
        let window = Locked<(start: UInt64, end: UInt64)?>(nil)
        try h.scheduler.start(key: "slow", duration: .seconds(10), observer: h.queue.judging("start") { _ in
            // Once every other countdown has delivered its first fire, one of this observer's
            // ticks holds the delivery queue, as a slow observer on the main queue would. Each
            // other countdown is then measured from a fire the block cannot have delayed.
            guard window.withLock({ $0 == nil }), others.allSatisfy({ $0.count >= 2 }) else { return }
            let start = h.now()
            h.settle(block)
            window.withLock { $0 = (start, h.now()) }
        })
        // The control: the same countdown on a fresh scheduler whose delivery queue nothing
        // blocks. Late as well, it says the process stalled (a starved thread pool, a frozen
        // machine), which the block did not cause: no verdict then, rather than a wrong one.
        let control = try c.makeScheduler(tick: tick)
        let controlLog = control.recorder()
        try control.scheduler.start(key: "control", duration: duration, observer: controlLog.observer)
        for (i, log) in others.enumerated() {
            try h.scheduler.start(key: "k\(i)", duration: duration, observer: log.observer)
        }
        // Generous: a backend whose workers wait for pool threads (operation-queue beside other
        // work in the process) may start them seconds late, which is not what is judged here.
        guard c.expect(h.waitUntil(timeout: .seconds(30)) {
                  others.allSatisfy { !$0.finishes.isEmpty } && !controlLog.finishes.isEmpty
              }, "the other countdowns or the control never finished within 30 s"),
              let (blockStart, blockEnd) = window.withLock({ $0 })
        else {
            c.fail("the slow observer was never called after the others' first fires")
            return .judged
        }
        /// A countdown's deadline as its first fire after the start placed it (a worker that
        /// began late moves both alike), the instant of that fire, and how late it finished.
        func finish(of log: Recorder) -> (firstFire: UInt64, deadline: UInt64, lateness: Int64)? {
            let ticks = log.ticks
            guard ticks.count >= 2, let finish = log.finishes.first else { return nil }
            let deadline = ticks[1].at + nanoseconds(duration - tick)
            return (ticks[1].at, deadline, Int64(finish.at) - Int64(deadline))
        }
        var lateness: [Int64] = []
        for log in others {
            // A countdown whose deadline the block covered cannot tell a stall from a delay.
            guard let f = finish(of: log), f.firstFire < blockStart, blockEnd < f.deadline else { continue }
            // Timing kept: the block ends before the deadline, so the finish is on time.
            // Counting stalled: the finish comes about the block's length late.
            lateness.append(f.lateness)
        }
        guard let worst = lateness.max(), let least = lateness.min() else {
            return .undecided("no countdown fired before the block and finished after it")
        }
        guard let controlLate = finish(of: controlLog)?.lateness else {
            return .undecided("the control countdown, on a scheduler whose delivery nothing blocked, ticked fewer than twice")
        }
        c.figure("one observer blocked the delivery queue \(DurationText.nanoseconds(Double(blockEnd - blockStart))); the others finished up to \(DurationText.nanoseconds(Double(worst))) late, the control \(DurationText.nanoseconds(Double(controlLate)))")
        guard controlLate < onTime else {
            return .undecided("the control, on a scheduler whose delivery nothing blocked, finished \(DurationText.nanoseconds(Double(controlLate))) late as well: the process stalled, not the observer")
        }
        // A stall moves every countdown the block covered, by about its length: the least late
        // of them says it. One finish late on its own (redis(keyspace)'s expiry, sampled among
        // every key with a TTL on the server, came 321 ms late beside others on time) is not one.
        let observed: CountdownProfile.SlowObserver
        if worst < onTime {
            observed = .delaysDeliveryOnly
        } else if least >= 300_000_000 {
            observed = .stallsCountdowns
        } else {
            return .undecided("finishes \(DurationText.nanoseconds(Double(least)))–\(DurationText.nanoseconds(Double(worst))) late: neither all on time nor all about the block's length late")
        }
        c.expect(observed == declared, "declares \(declared.rawValue), but observed \(observed.rawValue)")
        return .judged
    }
}
