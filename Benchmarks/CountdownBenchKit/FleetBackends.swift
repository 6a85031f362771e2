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

    /// A Redis strategy, on the server ``RedisTarget`` names; its namespace the options', else a
    /// fresh one.
    private static func redis(_ strategy: @escaping @Sendable (Options) -> RedisStrategy) -> CountdownBackend {
        CountdownBackend(name: "redis", variant: strategy(Options()).variant) { o in
            strategy(o).profile(capacity: o.capacity, maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration)
        } makeScheduler: { (o: Options) throws(CountdownError) in
            let endpoint: RedisEndpoint
            if let given = o.storeAddress.flatMap(RedisEndpoint.init) { endpoint = given } else { endpoint = try RedisTarget.endpoint() }
            return try RedisCountdownScheduler(
                endpoint: endpoint, namespace: o.namespace ?? RedisTarget.freshNamespace(),
                strategy: strategy(o), tickInterval: o.tickInterval, capacity: o.capacity,
                maximumDuration: o.maximumDuration ?? CountdownLimits.defaultMaximumDuration, deliveryQueue: o.deliveryQueue)
        }
    }
    #else
    static let fleet: [CountdownBackend] = []
    #endif

    /// Whether its countdowns live in a shared store (Redis) rather than in the process.
    var isFleet: Bool { name == "redis" }

    /// `--redis HOST:PORT`: the Redis backends use that server instead of one of their own.
    static func useRedis(_ text: String?) throws(UsageError) {
        guard let text else { return }
        #if Redis
        guard let endpoint = RedisEndpoint(text) else { throw UsageError("--redis must be HOST:PORT, not '\(text)'") }
        RedisTarget.use(endpoint)
        #else
        throw UsageError("--redis: this build leaves the Redis strategies out; build with swift build --traits Redis")
        #endif
    }
}

/// A scheduler whose start is a round trip, and which starts many in one (a pipeline): the
/// runner starts in batches with it.
protocol BatchStarting {
    func start(_ batch: [(key: String, duration: Duration, observer: CountdownObserver)]) -> [Result<CountdownStart, CountdownError>]
}

#if Redis
extension RedisCountdownScheduler: BatchStarting {}

/// The Redis server the benchmark's fleet backends use: the one `--redis HOST:PORT` names, else
/// a `redis-server` of the benchmark's own, started on first use on a free loopback port and
/// stopped when the process exits.
enum RedisTarget {
    private static let chosen = Locked<RedisEndpoint?>(nil)
    private static let own = Locked<LocalRedisServer?>(nil)

    /// `--redis HOST:PORT`.
    static func use(_ endpoint: RedisEndpoint) { chosen.withLock { $0 = endpoint } }

    static func endpoint() throws(CountdownError) -> RedisEndpoint {
        if let endpoint = chosen.withLock({ $0 }) { return endpoint }
        return try server().endpoint
    }

    /// The benchmark's own server (nil with `--redis`): its process, for its CPU time.
    static func ownServer() -> LocalRedisServer? { own.withLock { $0 } }

    private static func server() throws(CountdownError) -> LocalRedisServer {
        try own.withLock { (own: inout LocalRedisServer?) throws(CountdownError) -> LocalRedisServer in
            if let own { return own }
            do {
                let server = try LocalRedisServer()
                own = server
                atexit { RedisTarget.ownServer()?.remove() }
                return server
            } catch {
                throw .unavailable(.refused, "no --redis given, and \(error)")
            }
        }
    }

    static func freshNamespace() -> String { "bench-\(UInt64.random(in: 0...UInt64.max))" }
}
#endif
