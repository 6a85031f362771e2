import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `profile.drift` check: the finish error grows with the countdown's length only when declared.
enum ProfileDriftCheck {
    static let check = ConformanceCheck(
        "profile.drift", .profile,
        "the finish error grows with the countdown's length only when declared",
        needsRealWorld: "it measures how real timers drift",
        body: run)

    /// Rounds the drift is taken from, and the most rounds run to get them.
    static let goodRounds = 5
    static let maximumRounds = 15

    static func run(_ c: CheckContext) throws {
        // A 20 ms tick: to lose a tick a tick-counting backend must stall 20 ms, which a few
        // milliseconds of delivery jitter cannot hide from the stall test (``DriftRound``).
        let tick = Duration.milliseconds(20)
        let h = try c.makeScheduler(tick: tick)
        let declared = h.scheduler.profile.drift
        let duration = Duration.milliseconds(1800)
        var drifts: [Double] = []
        var stalled = 0, behind = 0, measured = 0
        // One countdown at a time, beside the check's own grid. The finish error grows with
        // the length exactly as the fires drift from first fire + k·T, so each round measures
        // that drift (``DriftRound``); a round stalled, or in which the control drifted too, is
        // left out and another run in its place. A worker that starts late moves nothing.
        for round in 0..<Self.maximumRounds where drifts.count < Self.goodRounds {
            measured += 1
            let log = h.recorder()
            let control = GridControl(tick: tick, queue: h.queue.queue, stamp: h.now)
            try h.scheduler.start(key: "d\(round)", duration: duration, observer: log.observer)
            let finished = log.waitForFinish()
            let controlTicks = control.stop()
            guard c.expect(finished, "a \(duration) countdown never finished") else { return }
            guard let finish = log.finishes.first else { continue }
            // The fires: every tick after the first (told at the start) and the finish.
            let fires = log.ticks.dropFirst().map(\.at) + [finish.at]
            switch DriftRound.judge(fires: fires, control: controlTicks, tick: tick) {
            case .drift(let drift): drifts.append(drift)
            case .stalled: stalled += 1
            case .machineFellBehind: behind += 1
            case .tooShort: continue
            }
        }
        guard !drifts.isEmpty else {
            c.inconclusive("no round was steady (\(stalled) of \(measured) rounds stalled; in \(behind) the machine fell behind)")
            return
        }
        let drift = median(drifts)  // ns per tick
        c.figure(String(format: "the ticks drift %.1f µs per tick from the first fire + k·T, floor to floor (median of %d rounds of %@; of %d rounds, %d stalled, in %d the machine fell behind)",
                        drift / 1000, drifts.count, "\(duration)", measured, stalled, behind))
        let observed: CountdownProfile.Drift
        switch drift {
        case ..<DriftRound.boundedBelow: observed = .bounded
        case DriftRound.accumulatesFrom...: observed = .accumulates
        default:
            c.inconclusive(String(format: "%.1f µs per tick: between bounded (< 10) and accumulating (≥ 20)", drift / 1000))
            return
        }
        c.expect(observed == declared, "declares \(declared.rawValue), but observed \(observed.rawValue)")
    }

    private static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
}
