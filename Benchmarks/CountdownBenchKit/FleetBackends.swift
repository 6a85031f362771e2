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
            // The suite's member or proxy address, with the chosen server's credentials and timeouts.
            var endpoint = try RedisTarget.endpoint()
            if let given = o.storeAddress.flatMap(RedisEndpoint.init) { endpoint = endpoint.at(given.address) }
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

    /// `--redis URL` (or `HOST:PORT`), else `REDIS_URL` from the environment: the Redis
    /// backends use that server instead of one of their own. A bad one is a usage error that
    /// shows it without its password.
    static func useRedis(_ text: String?) throws(UsageError) {
        #if Redis
        guard let text = text ?? ProcessInfo.processInfo.environment["REDIS_URL"] else { return }
        RedisTarget.use(try redisEndpoint(text))
        #else
        // REDIS_URL alone is no error here: a build without the trait has no use for it.
        guard text != nil else { return }
        throw UsageError("--redis: this build leaves the Redis strategies out; build with swift build --traits Redis")
        #endif
    }
}

#if Redis
/// `text` as `--redis` takes it (a URL, or `HOST:PORT`); a usage error without the password.
func redisEndpoint(_ text: String) throws(UsageError) -> RedisEndpoint {
    do {
        return try RedisEndpoint.parse(text)
    } catch {
        throw UsageError("--redis: \(error)")
    }
}
#endif

/// A scheduler whose start is a round trip, and which starts many in one (a pipeline): the
/// runner starts in batches with it.
protocol BatchStarting {
    func start(_ batch: [(key: String, duration: Duration, observer: CountdownObserver)]) -> [Result<CountdownStart, CountdownError>]
}

#if Redis
extension RedisCountdownScheduler: BatchStarting {}

/// The Redis server the benchmark's fleet backends use: the one `--redis URL` (or `REDIS_URL`) names, else
/// a `redis-server` of the benchmark's own, started on first use on a free loopback port and
/// stopped when the process exits.
enum RedisTarget {
    private static let chosen = Locked<RedisEndpoint?>(nil)
    private static let own = Locked<LocalRedisServer?>(nil)

    /// `--redis URL`, or `REDIS_URL`.
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
