import Countdown
#if Redis
import CountdownRedis
import CountdownSupport
import Foundation
#endif

extension CountdownBackend {
    /// The fleet strategies, in a build with the Redis trait (`swift build --traits Redis`);
    /// none otherwise.
    #if Redis
    static let fleet: [CountdownBackend] = [.redisZSet(), .redisKeyspace]

    /// `redis(zset)`: deadlines in a sorted set, the engineered strategy; with a tolerance,
    /// `redis(zset~10ms)`.
    static func redisZSet(tolerance: Duration = .zero) -> CountdownBackend {
        redis { o in .sortedSet(tolerance: min(tolerance, o.tickInterval / 2)) }
    }

    /// `redis(keyspace)`: a key with a TTL per countdown and keyspace notifications, as the
    /// tutorials build it.
    static let redisKeyspace = redis { _ in .keyspaceNotifications }

    /// A Redis strategy, on the server ``RedisTarget`` names; its namespace the options' (the
    /// suite's, fresh for each check), else a fresh one, under the benchmark's root.
    private static func redis(_ strategy: @escaping @Sendable (Options) -> RedisStrategy) -> CountdownBackend {
        CountdownBackend(name: "redis", variant: strategy(Options()).variant) { o in
            strategy(o).profile(capacity: o.capacity, maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration)
        } makeScheduler: { (o: Options) throws(CountdownError) in
            // The suite's member or proxy address, with the chosen server's credentials and timeouts.
            var endpoint = try RedisTarget.endpoint()
            if let given = o.storeAddress.flatMap(RedisEndpoint.init) { endpoint = endpoint.at(given.address) }
            return RedisTarget.track(try RedisCountdownScheduler(
                endpoint: endpoint, namespace: o.namespace.map(RedisTarget.namespace) ?? RedisTarget.freshNamespace(),
                strategy: strategy(o), tickInterval: o.tickInterval, capacity: o.capacity,
                maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration, deliveryQueue: o.deliveryQueue))
        }
    }
    #else
    static let fleet: [CountdownBackend] = []
    #endif

    /// Whether its countdowns live in a shared store (Redis) rather than in the process.
    var isFleet: Bool { name == "redis" }
}

/// A scheduler whose start is a round trip, and which starts many in one (a pipeline): the
/// runner starts in batches with it.
protocol BatchStarting {
    func start(_ batch: [(key: String, duration: Duration, observer: CountdownObserver)]) -> [Result<CountdownStart, CountdownError>]
}

#if Redis
extension RedisCountdownScheduler: BatchStarting {}
#endif
