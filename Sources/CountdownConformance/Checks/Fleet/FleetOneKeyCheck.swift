import Countdown
import CountdownSupport

/// The `fleet.one-key` check: of concurrent starts of one key from two schedulers sharing their
/// countdowns, exactly one answers `.started`; the countdown finishes once, fleet-wide.
enum FleetOneKeyCheck {
    static let check = ConformanceCheck(
        "fleet.one-key", .contract,
        "a fleet: 8 threads over 2 schedulers start one key: one .started fleet-wide, one finish",
        body: run)

    static let threads = 8, rounds = 10

    static func run(_ c: CheckContext) throws {
        guard let (a, b) = try c.makeFleet(tick: .milliseconds(20)) else { return }
        // Judged as `one-key` judges one scheduler: by the calls' own instants (``StartRace``).
        var duration = Duration.milliseconds(80)
        var spread = 0
        for round in 0..<rounds {
            let key = "fleet:one-key:\(round)"
            let harnesses = (0..<threads).map { $0 % 2 == 0 ? a : b }
            let recorders = harnesses.map { $0.recorder() }
            let race = StartRace.run(key, duration: duration, on: harnesses.map(\.scheduler), recorders: recorders, now: a.now)
            if let violation = race.violation(describing: "round \(round): \(threads) concurrent starts over two schedulers") { c.fail(violation) }
            if !race.overlapped {
                spread += 1
                duration = min(duration * 2, .seconds(2))
            }
            let started = race.attempts.filter(\.started).count
            // Every countdown's finish waited for, not a fixed while: beside a loaded machine a
            // second countdown's finish came more than 100 ms after its key was gone, and was
            // counted lost. Then 100 ms more for a finish heard twice.
            let finished = { recorders.reduce(0) { $0 + $1.finishes.count } }
            let heard = a.waitUntil { finished() >= max(started, 1) && a.scheduler.remaining(key: key) == nil }
            c.expect(heard, "round \(round): \(finished()) finishes fleet-wide for \(started) countdowns within 10 s")
            a.settle(.milliseconds(100))
            a.drain()
            b.drain()
            let finishes = finished()
            c.expect(finishes == started, "round \(round): \(finishes) finishes fleet-wide for \(started) countdowns")
            for (index, recorder) in recorders.enumerated() { EventRules.wellFormed(recorder.all, "\(key) observer \(index)", in: c) }
        }
        c.figure("\(rounds) rounds of \(threads) starts over 2 schedulers"
            + (spread > 0 ? "; \(spread) spread over more than their countdown, judged by their timestamps (countdown lengthened to \(DurationText.nanoseconds(Double(nanoseconds(duration)))))" : ""))
    }
}
