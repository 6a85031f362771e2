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
        // milliseconds of delivery jitter cannot hide from the stall test below.
        let tick = Duration.milliseconds(20)
        let h = try c.makeScheduler(tick: tick)
        let declared = h.scheduler.profile.drift
        let duration = Duration.milliseconds(1800)
        var drifts: [Double] = []
        var stalled = 0, measured = 0
        // One countdown at a time. The finish error grows with the length exactly as the ticks'
        // grid drifts from start + k·T, so each round measures the grid's slope: the median of
        // the slopes between every two ticks at least ten apart (Theil–Sen), minus T. A tick
        // delivered late moves only the pairs it is in, so the slope holds on a loaded machine
        // where the finish alone (one instant against another) moved by milliseconds; a worker
        // that starts late moves none of them. A round in which ticks arrive more than two
        // ticks apart was stalled: a tick-counting backend loses the ticks of a stall (the
        // suspension profile, not drift), so the round is left out and another run in its place.
        for round in 0..<Self.maximumRounds where drifts.count < Self.goodRounds {
            measured += 1
            let log = h.recorder()
            try h.scheduler.start(key: "d\(round)", duration: duration, observer: log.observer)
            guard c.expect(log.waitForFinish(), "a \(duration) countdown never finished") else { return }
            guard let finish = log.finishes.first else { continue }
            // The fires: every tick after the first (told at the start) and the finish.
            let fires = log.ticks.dropFirst().map(\.at) + [finish.at]
            guard fires.count >= 20 else { continue }
            let widest = zip(fires, fires.dropFirst()).map { $1 - $0 }.max() ?? 0
            guard widest <= 2 * nanoseconds(tick) else {
                stalled += 1
                continue
            }
            drifts.append(Self.gridSlope(fires) - Double(nanoseconds(tick)))
        }
        guard !drifts.isEmpty else {
            c.inconclusive("every round was stalled (\(stalled) of \(measured) rounds)")
            return
        }
        let drift = median(drifts)  // ns per tick
        c.figure(String(format: "the ticks drift %.1f µs per tick from start + k·T (median of %d rounds of %@; %d of %d rounds stalled)",
                        drift / 1000, drifts.count, "\(duration)", stalled, measured))
        let observed: CountdownProfile.Drift
        switch drift {
        case ..<10_000: observed = .bounded
        case 20_000...: observed = .accumulates
        default:
            c.inconclusive(String(format: "%.1f µs per tick: between bounded (< 10) and accumulating (≥ 20)", drift / 1000))
            return
        }
        c.expect(observed == declared, "declares \(declared.rawValue), but observed \(observed.rawValue)")
    }

    /// The median slope, in nanoseconds per fire, between every two fires at least ten apart.
    static func gridSlope(_ fires: [UInt64]) -> Double {
        var slopes: [Double] = []
        for i in fires.indices {
            for j in fires.indices where j - i >= 10 {
                slopes.append(Double(Int64(fires[j]) - Int64(fires[i])) / Double(j - i))
            }
        }
        return median(slopes)
    }

    private static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
}
