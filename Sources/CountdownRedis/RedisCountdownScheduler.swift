#if Redis
import Countdown
import CountdownSupport
import Dispatch

/// Countdowns kept in Redis, shared by every scheduler (process, server) made on the same Redis
/// and namespace: a server's rate-limit windows once the service runs on several servers. Two
/// strategies (``RedisStrategy``): a sorted set of deadlines, engineered and recommended, and
/// keys with TTLs heard through keyspace notifications, as the tutorials build it, measured and
/// not recommended. Both keep the contract's API and the fleet semantics below; how well each
/// keeps the contract's timing is what the conformance suite and `countdown-bench` report.
///
/// Ticks are computed where the observer is, from the shared deadline: they need no Redis call.
///
/// ## Fleet semantics
///
/// What the conformance suite's fleet checks hold (members in processes of their own, with
/// answers dropped and connections reset between them, and a member killed), and
/// `countdown-bench fleet` measures at a server's sizes:
///
/// - **Shared.** A `start` in one scheduler is an `CountdownStart/attached(remaining:)` in
///   another; `remaining`, `cancel`, `pause`, `resume`, `activeKeys` and `activeCount` answer for
///   the fleet, from any member. Concurrent calls on one key from several members behave as if
///   made one at a time, in an order that respects which call returned before another began.
/// - **One observer, the last attached anywhere.** An attach in process B ends what process A's
///   observer hears, as a second attach does within one process, and A lets the observer go.
///   Across processes it takes one hop: once B's call has returned, A's observer hears nothing
///   that begins more than 100 ms later (on loopback the hop takes about a millisecond). The
///   same goes for a cancel or a pause made in another process than the observer's. A member
///   that cannot read its inbox (`redis(zset)`; its connection broke) holds its observers'
///   ticks from 50 ms after its last answer until it has read what it missed, those already
///   on their way to the observer too: a tick lost, not one heard by a replaced observer. Within one process the contract holds exactly.
/// - **Nothing dropped for coming first.** What another member does to a countdown reaches this
///   member on another connection than its own call's answer, and may come first: it is kept
///   until the answer comes, then applied (an observer is never orphaned by a race).
/// - **One clock.** Deadlines are instants of the Redis server's clock (`TIME` inside the
///   scripts, or the server's own key expiry), never a member's: members whose clocks disagree
///   still agree on every finish. A jump of the Redis host's clock moves every countdown with it
///   (set forward, they finish early by the jump; set back, late). A member's own clock changes
///   nothing but the instants its ticks are computed for, from the offset to the server's clock
///   it measures with every answer.
/// - **One finish, fleet-wide**, delivered where the observer is, never twice, never early. How
///   it gets there and when it can be lost is the strategy's: see ``RedisStrategy``.
/// - **Nothing lost with a process.** A member killed mid-countdown loses nothing of the
///   countdown: it lives in Redis, another member claims it, and its last observer hears the
///   finish if that observer lives. Only the killed member's own observers go unheard.
/// - **Every call safe to send twice.** A call whose answer was lost (the connection closed or
///   reset after the server ran it, an answer that timed out) is sent again on a new
///   connection, within a second, and answered as it was the first time: the server keeps each
///   answer under the caller's call id until the caller has read it. A start sent again after
///   another member attached still answers `CountdownStart/started`; a cancel sent again still
///   answers true.
/// - **Shutdown** of one member ends what its observers hear and the threads it started; the
///   countdowns are the fleet's and stay in Redis (a server redeployed keeps its users'
///   windows). The member itself then answers as a scheduler with nothing: `activeCount` 0,
///   `remaining` nil, `start` throws `CountdownError/shutDown`.
/// - **Redis away.** `init` throws `CountdownError/unavailable(_:_:)` and leaves nothing
///   behind. A connection that breaks is made again; a call is sent again for up to a second
///   (a restart, a `CLIENT KILL`, a dropped answer); after that it throws
///   `CountdownError/unavailable(_:_:)` with its reason (`UnavailableReason`) from `start`
///   and from every call made through ``throwing``. The protocol's non-throwing calls answer
///   false, nil, `[]`, 0 or an ended stream then, counted in ``unavailableCalls``. What a
///   restarted Redis kept is kept: with `appendonly yes` and `appendfsync everysec`, at most the
///   last second of changes is lost.
public final class RedisCountdownScheduler: CountdownScheduler {
    public let profile: CountdownProfile
    /// How it keeps and times the fleet's countdowns in Redis.
    public let strategy: RedisStrategy
    private let engine: any FleetEngine

    /// - Parameters:
    ///   - endpoint: the Redis server (7.0 or later).
    ///   - namespace: schedulers on the same server and namespace share their countdowns.
    ///   - strategy: a sorted set of deadlines (``RedisStrategy/sortedSet(tolerance:shards:)``, the
    ///     default and the recommended one) or keyspace notifications (measured, not recommended).
    ///   - tickInterval: `T`, how often a running countdown ticks where its observer is.
    ///   - capacity: the most countdowns the fleet runs at once under this namespace (nil: no
    ///     limit); the sorted set counts them, the keyspace strategy takes none.
    ///   - maximumDuration: the longest countdown `start` accepts; a longer one throws.
    ///   - deliveryQueue: the serial queue this member's observers run on; nil: a queue of its own.
    ///   - evictionAllowed: whether to run on a server whose `maxmemory-policy` is not
    ///     `noeviction` (read with `INFO memory`): one that evicts keys when full may drop
    ///     countdowns without a word. False: `init` refuses it.
    /// - Throws: `CountdownError/unavailable(_:_:)` when Redis cannot be reached (or the user may
    ///   not read `INFO memory`), `CountdownError/invalidConfiguration(_:)` when the server may
    ///   evict keys and `evictionAllowed` is false, or a settings error; nothing is left behind.
    public convenience init(
        endpoint: RedisEndpoint,
        namespace: String = "countdown",
        strategy: RedisStrategy = .sortedSet(),
        tickInterval: Duration = .seconds(1),
        capacity: Int? = nil,
        maximumDuration: Duration = CountdownLimits.defaultMaximumDuration,
        deliveryQueue: DispatchQueue? = nil,
        evictionAllowed: Bool = false
    ) throws(CountdownError) {
        try self.init(
            endpoint: endpoint, namespace: namespace, strategy: strategy, tickInterval: tickInterval, capacity: capacity,
            maximumDuration: maximumDuration, deliveryQueue: deliveryQueue, evictionAllowed: evictionAllowed, defects: [])
    }

    /// With defects made on purpose, for this package's tests of the suite (``FleetDefects``).
    init(
        endpoint: RedisEndpoint, namespace: String, strategy: RedisStrategy, tickInterval: Duration, capacity: Int?,
        maximumDuration: Duration, deliveryQueue: DispatchQueue?, evictionAllowed: Bool = false, defects: FleetDefects
    ) throws(CountdownError) {
        let settings = try SchedulerSettings(
            tickInterval: tickInterval, maximumDuration: maximumDuration,
            capacity: strategy.takesCapacity ? capacity : nil,
            deliveryQueue: deliveryQueue, label: "countdown.redis")
        // Before anything is made: every grant the strategy needs (one error naming all that
        // are missing), then the memory policy, on a connection of their own.
        // On a Redis Cluster, where each connection goes when its node fails.
        let cluster = ClusterMap(endpoint)
        let admin = try RedisAdmin(endpoint, route: ClusterRoute(map: cluster, slot: ClusterSlot.of("{\(namespace)}")))
        switch strategy {
        case .sortedSet(_, let shards, let replicas) where (1...64).contains(shards):
            for prefix in ZSetShards(namespace: namespace, count: shards).prefixes {
                try admin.check(ZSetKeys.permissions, prefix: prefix, strategy: "redis(zset)")
                if replicas != nil { try admin.check(ZSetKeys.replicaPermissions, prefix: prefix, strategy: strategy.variant) }
            }
        case .keyspaceNotifications:
            try admin.check(KeyspaceKeys.permissions, prefix: "{\(namespace)}", strategy: "redis(keyspace)")
        default: break
        }
        // Every node of a cluster known from the start, so that losing the one in the URL
        // loses nothing (a single server, or a user without `cluster|slots`: no map); and
        // every master's memory policy read, each named: each holds countdowns.
        cluster.read()
        let masters = cluster.masters
        if masters.isEmpty {
            try EvictionPolicy.check(admin, allowed: evictionAllowed)
        } else if !evictionAllowed {
            for master in masters {
                try EvictionPolicy.check(RedisAdmin(endpoint.at(master), route: nil), allowed: false, node: master.hostAndPort)
            }
        }
        switch strategy {
        case .sortedSet(let tolerance, let shards, let replicas):
            try settings.validate(tolerance: tolerance)
            try replicas?.validate(against: endpoint)
            guard (1...64).contains(shards) else {
                throw .invalidConfiguration("the sorted set's shards, \(shards), are not between 1 and 64")
            }
            engine = try ZSetEngine(
                endpoint: endpoint, namespace: namespace, settings: settings, tolerance: tolerance, shards: shards, cluster: cluster,
                replicas: replicas.map(ReplicaWait.init), defects: defects)
        case .keyspaceNotifications:
            engine = try KeyspaceEngine(endpoint: endpoint, namespace: namespace, settings: settings, cluster: cluster)
        }
        self.strategy = strategy
        profile = strategy.profile(capacity: settings.capacity, maximumDuration: maximumDuration)
    }

    deinit { engine.shutdown() }

    public var tickInterval: Duration { engine.settings.tickInterval }
    public var deliveryQueue: DispatchQueue { engine.settings.deliveryQueue }

    /// The calls the protocol declares as non-throwing, and `attach` and `events`, throwing
    /// `CountdownError/unavailable(_:_:)` when Redis cannot answer.
    public var throwing: RedisCountdownCalls { RedisCountdownCalls(engine: engine) }

    /// Every call for tasks: they suspend while Redis answers, where these block
    /// (``RedisCountdownAsyncCalls``). What a server's request handlers call.
    public var async: RedisCountdownAsyncCalls { RedisCountdownAsyncCalls(engine: engine) }

    /// How many calls answered false, nil, `[]` or 0 because Redis could not be reached.
    public var unavailableCalls: Int { engine.unavailableCalls.load(ordering: .relaxed) }

    /// How many observers here heard their finish because their countdown was gone from Redis
    /// past its deadline, with no word of its end on its way: a start a failover lost (Redis
    /// replicates after it answers), an eviction, a `DEL` by hand. `redis(zset)` asks within a
    /// second of half a second past the deadline; `redis(keyspace)` never does (0).
    public var lostCountdowns: Int { engine.watch.lostCountdowns.load(ordering: .relaxed) }

    /// The last failure of this member's own threads, which no call of yours sees: each
    /// shard's claimer (a claim refused leaves countdowns unfinished), its inbox reader (a
    /// message refused leaves a replaced observer ticking), the keyspace subscriber. The text
    /// names the thread and the command (`the inbox reader's BLMOVE: NOPERM … 'blmove'`); a
    /// permission missing is `.authentication`. Nil if none has failed. Each such thread
    /// retries at most ten times a second while it fails.
    public var lastBackgroundFailure: CountdownError? { engine.background.last }

    /// How many times this member's own threads failed (``lastBackgroundFailure``).
    public var backgroundFailures: Int { engine.background.count }

    /// How many countdowns this member observes (their observers are here).
    public var observedHere: Int { engine.watch.observedCount }

    @discardableResult
    public func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
        throws(CountdownError) -> CountdownStart
    {
        try engine.start(key: key, duration: duration, observer: FleetObserver(observer)).wait()
    }

    /// Starts every countdown of `batch` in one round trip (a pipeline): what a server filling windows in
    /// bulk calls, and the benchmark. The answers, in order; one that fails does not stop the
    /// others.
    public func start(
        _ batch: [(key: String, duration: Duration, observer: CountdownObserver)]
    ) -> [Result<CountdownStart, CountdownError>] {
        engine.startMany(batch.map { ($0.key, $0.duration, FleetObserver($0.observer)) }).wait()
    }

    @discardableResult
    public func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        counted(nil) { () throws(CountdownError) in try engine.attach(key: key, observer: FleetObserver(observer)).wait() }
    }

    public func events(key: String) -> AsyncStream<CountdownEvent> {
        do {
            return try throwing.events(key: key)
        } catch {
            engine.unavailableCalls.add(1, ordering: .relaxed)
            return AsyncStream { $0.finish() }
        }
    }

    @discardableResult public func cancel(key: String) -> Bool {
        counted(false) { () throws(CountdownError) in try engine.cancel(key: key).wait() }
    }

    @discardableResult public func pause(key: String) -> Bool {
        counted(false) { () throws(CountdownError) in try engine.pause(key: key).wait() }
    }

    @discardableResult public func resume(key: String) -> Bool {
        counted(false) { () throws(CountdownError) in try engine.resume(key: key).wait() }
    }

    public func remaining(key: String) -> Duration? {
        counted(nil) { () throws(CountdownError) in try engine.remaining(key: key).wait() }
    }

    public var activeKeys: [String] { counted([]) { () throws(CountdownError) in try engine.activeKeys().wait() } }

    public var activeCount: Int { counted(0) { () throws(CountdownError) in try engine.activeCount().wait() } }

    /// Nothing to do: the deadline is the server's, and a frozen member loses no time.
    public func enteredBackground() {}
    public func enteredForeground() {}

    public func shutdown() { engine.shutdown() }

    /// The protocol's non-throwing forms: `fallback` when Redis cannot be reached, counted.
    private func counted<T>(_ fallback: T, _ body: () throws(CountdownError) -> T) -> T {
        do {
            return try body()
        } catch {
            engine.unavailableCalls.add(1, ordering: .relaxed)
            return fallback
        }
    }
}
#endif
