// The README's fleet example ("Run the suite on your own backend"): a fleet backend judged across
// processes, with `RedisCountdownScheduler` standing in for yours, against the test process's
// own redis-server (with the Redis trait; without it, only its text is compared with the README's).
#if Redis
import Countdown
import CountdownConformance
import CountdownRedis
import Foundation
import Testing

/// The store the README's example names: here the test process's own redis-server. In a member
/// process the suite says where the store is, and this is never read.
var redisAddress: String {
    CountdownConformance.isFleetMember ? "" : ((try? TestRedis.server().endpoint.hostAndPort) ?? "")
}

/// On a thread of its own: the example blocks for the three trials, which wait their turns
/// behind the other fleet tests', and on the cooperative pool (two threads here) it starved them.
/// Its lines are not indented, so that they are the README's as they stand.
@Suite(.dedicatedThread, .timeLimit(.minutes(10)))
struct ReadmeFleetExample {
// README fleet example begins
@Test func myFleetKeepsItsPromises() {
    let fleet = CountdownConformance.Fleet(relaunch: .swiftTesting("myFleetKeepsItsPromises"), store: redisAddress)
    let suite = CountdownConformance(name: "my-fleet", options: .init(fleet: fleet)) { environment in
        // The suite's members and its fault proxy tell the backend where the store is.
        try RedisCountdownScheduler(
            endpoint: RedisEndpoint(environment.storeAddress ?? redisAddress)!, namespace: environment.namespace,
            tickInterval: environment.tickInterval, deliveryQueue: environment.deliveryQueue)
    }
    let report = suite.run(only: ["fleet.race", "fleet.faults", "fleet.kill"])
    #expect(report.passed, "\(report)")
}
// README fleet example ends
}
#endif
