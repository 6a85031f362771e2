import Countdown
import CountdownSupport
import Foundation

/// The `replay` check: a backend that runs in virtual time delivers the same events in the same
/// order, at the same instants, when the same calls are made again: a test that failed once
/// fails again. Two seeded simulations of the same operations on two fresh schedulers, their
/// traces compared. Not applicable in real time, where nothing replays.
enum ReplayCheck {
    static let check = ConformanceCheck(
        "replay", .contract,
        "in virtual time, the same operations from the same seed deliver the same events in the same order",
        body: run)

    static func run(_ c: CheckContext) throws {
        let first = try c.makeScheduler(tick: RandomizedSimulation.tick)
        guard first.time.mode == .virtual else {
            c.notApplicable("only a backend that runs in virtual time can replay: real clocks never repeat")
            return
        }
        let second = try c.makeScheduler(tick: RandomizedSimulation.tick)
        let seed = c.options.seed, count = min(c.options.randomizedOperations, 20_000)
        let operations = RandomizedSimulation.operations(seed: seed, count: count, maximum: first.scheduler.profile.maximumDuration)
        let one = RandomizedSimulation.play(operations[...], on: first, in: c, seed: seed).trace
        let two = RandomizedSimulation.play(operations[...], on: second, in: c, seed: seed).trace
        c.expect(one.events == two.events && one.digest == two.digest,
                 "two runs of seed \(seed) heard different events: \(one.events) events (trace \(String(one.digest, radix: 16))), then \(two.events) (trace \(String(two.digest, radix: 16)))")
        c.expect(one.events > 0, "the simulation of seed \(seed) heard no event")
        c.figure("two runs of \(count) operations from seed \(seed): \(one.events) events each, the same in the same order (trace \(String(one.digest, radix: 16)))")
    }
}
