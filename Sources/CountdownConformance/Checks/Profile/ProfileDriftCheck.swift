import CountdownSupport
import Countdown
import Dispatch
import Foundation

/// The `profile.drift` check: the finish error grows with the countdown's length only when declared.
enum ProfileDriftCheck {
    static let check = ConformanceCheck(
        "profile.drift", .profile,
        "the finish error grows with the countdown's length only when declared",
        body: run)

    /// Rounds of each length the slope is taken from, and the most rounds run to get them.
    static let goodRounds = 5
    static let maximumRounds = 15

    static func run(_ c: CheckContext) throws {
        // A 20 ms tick: to lose a tick a tick-counting backend must stall 20 ms, which a few
        // milliseconds of delivery jitter cannot hide from the stall test below.
        let tick = Duration.milliseconds(20)
        let h = try c.makeScheduler(tick: tick)
        let declared = h.scheduler.profile.drift
        let short = Duration.milliseconds(200), long = Duration.milliseconds(1800)
        var errors: [Duration: [Int64]] = [short: [], long: []]
        var disturbed = 0, measured = 0
        // One countdown at a time, measured from its first fire, so that a worker that starts
        // late is not mistaken for drift. A round in which ticks arrive more than two ticks apart
        // was stalled: a tick-counting backend loses the ticks of a stall (the suspension
        // profile, not drift), so the round is left out, and another is run in its place: up to
        // five good rounds of each length, within fifteen rounds (on a loaded two-core machine
        // all five long rounds of an operation-queue worker were once stalled).
        for round in 0..<Self.maximumRounds {
            if errors.values.allSatisfy({ $0.count >= Self.goodRounds }) { break }
            for duration in [short, long] where errors[duration, default: []].count < Self.goodRounds {
                measured += 1
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
            c.inconclusive("every round of one length was stalled (\(disturbed) of \(measured) rounds)")
            return
        }
        let extraTicks = Double((long - short) / tick)
        let slope = Double(median(longErrors) - median(shortErrors)) / extraTicks  // ns per tick
        c.figure(String(format: "finish error grows %.1f µs per tick (median %@ at %@, %@ at %@; %d of %d rounds stalled)",
                        slope / 1000, DurationText.nanoseconds(Double(median(shortErrors))), "\(short)", DurationText.nanoseconds(Double(median(longErrors))), "\(long)",
                        disturbed, measured))
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
}
