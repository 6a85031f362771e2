import Testing

@testable import CountdownConformance

/// What the virtual-time simulation's operations exercise, read from the operations alone: no
/// scheduler, no clock.
@Suite struct RandomizedSimulationTests {
    /// How often a list of operations pauses a countdown while it runs, cancels it while paused,
    /// and starts the key again: the sequence a backend that restarts such a key paused fails on.
    static func cancelledWhilePausedThenRestarted(_ operations: [RandomizedSimulation.Operation]) -> Int {
        struct Key { var deadline: Duration? = nil; var pausedWithLeft: Duration? = nil; var cancelledWhilePaused = false }
        var keys = Array(repeating: Key(), count: RandomizedSimulation.keys)
        var now = Duration.zero, hits = 0
        for operation in operations {
            var key = keys[operation.key]
            if let deadline = key.deadline, key.pausedWithLeft == nil, deadline <= now { key.deadline = nil }
            switch operation.call {
            case .start where key.deadline == nil:
                if key.cancelledWhilePaused { hits += 1 }
                key = Key(deadline: now + operation.duration)
            case .cancel where key.deadline != nil:
                key = Key(cancelledWhilePaused: key.pausedWithLeft != nil)
            case .pause where key.deadline != nil && key.pausedWithLeft == nil:
                key.pausedWithLeft = key.deadline! - now
            case .resume where key.pausedWithLeft != nil:
                key.deadline = now + key.pausedWithLeft!
                key.pausedWithLeft = nil
            default: break
            }
            keys[operation.key] = key
            now += operation.advance
        }
        return hits
    }

    /// Several times in every seed, so that later operations on the key cannot hide it each
    /// time. A uniform draw over the 64 keys did it 0 times in 2 of these 200 seeds, 2 or fewer
    /// in a tenth of them; with hot keys, 7 to 28 times.
    @Test func everySeedCancelsAPausedCountdownAndRestartsItsKeySeveralTimes() {
        let seeds = (1...200).map { UInt64($0) &* 0x9E37_79B9 }
        let rare = seeds.filter { seed in
            Self.cancelledWhilePausedThenRestarted(RandomizedSimulation.operations(seed: seed, count: 2_000, maximum: .seconds(3_600))) < 3
        }
        #expect(rare.isEmpty, "\(rare.count) of \(seeds.count) seeds do it fewer than 3 times: \(rare.prefix(5))")
    }
}
