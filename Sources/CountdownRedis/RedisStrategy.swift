import Countdown

/// How ``RedisCountdownScheduler`` keeps a fleet's countdowns in Redis.
public enum RedisStrategy: Sendable, Hashable {
    /// The engineered one: deadlines in a sorted set beside each countdown's state, every
    /// operation one Lua script. A thread per member sleeps until the earliest deadline it knows
    /// (woken when an earlier one is added, here or by another member, and once a second) and
    /// claims what is due with one script that removes it: one member owns each finish. The
    /// claimer delivers a finish whose observer is its own; the script itself posts any other to
    /// the observer's member's inbox (a list), in the same atomic step as the claim, so a finish
    /// survives the claimer's death. A claim whose answer is lost is sent again and answered with
    /// the same countdowns; an inbox is read into a processing list (`BLMOVE`, Redis' reliable
    /// queue) and emptied only once handled, so a message survives a dropped connection. A finish
    /// is lost only where nobody can hear it: the observer's member is gone (killed, shut down,
    /// away over a minute, after which its inbox expires). As Sidekiq's scheduled set, BullMQ's
    /// delayed jobs and Redisson's delayed queue work.
    ///
    /// `tolerance`: how late a finish may come by design so that finishes due close together
    /// share a claim; never early.
    ///
    /// `shards`: over how many hash tags the namespace's countdowns are spread (1 to 64), each
    /// with its own sorted set, inboxes and claimer thread per member. Redis runs one script at a
    /// time per node, and a hash tag is one slot, on one node: with one shard the whole fleet's
    /// starts are paid by one Redis core. On a Redis Cluster of S masters, S shards put one on
    /// each. A key's shard is a stable hash of the key, the same in every member; every member of
    /// a namespace must use the same number. With a `capacity`, each shard takes an even share of
    /// it, rounded up: a start may be refused while other shards have room.
    ///
    /// `replicas`: how many replicas must hold a start before it answers (``RedisReplicas``,
    /// Redis' `WAIT`); nil, the default: the master's answer is enough, and a failover may lose
    /// the last starts it acknowledged.
    case sortedSet(tolerance: Duration = .zero, shards: Int = 1, replicas: RedisReplicas? = nil)

    /// As the tutorials build it: `SET key … PX ms` per countdown, and a subscriber on
    /// `__keyevent@<db>__:expired` that hears the end. Redis sends that event when it *deletes*
    /// the key: when a client touches it, or when its background cycle happens to sample it, not
    /// when the TTL reaches zero; beside many keys with TTLs that is seconds to minutes late.
    /// Pub/sub is fire-and-forget: an event sent while the subscriber is disconnected is lost,
    /// and so is the finish (or the replacement, the cancel, the pause another member published).
    /// Every member hears every expiry; only the observer's member delivers it. The server must
    /// notify expired events (`notify-keyspace-events` with `Ex`): the subscriber turns it on
    /// each time it connects (a restarted server forgets it unless its configuration file says
    /// so), and every call throws `CountdownError/unavailable(_:_:)` while the server refuses.
    /// Measured and judged, not recommended.
    case keyspaceNotifications

    /// The command-line variant: `zset`, `zset~10ms`, `zset*3` (three shards), `zset+wait1`
    /// (starts acknowledged by a replica), `keyspace`.
    public var variant: String {
        switch self {
        case .sortedSet(let tolerance, let shards, let replicas):
            (tolerance > .zero ? "zset~\(Self.compact(tolerance))" : "zset") + (shards > 1 ? "*\(shards)" : "")
                + (replicas.map { "+wait\($0.count)" } ?? "")
        case .keyspaceNotifications:
            "keyspace"
        }
    }

    /// Whether it counts its countdowns against a capacity.
    var takesCapacity: Bool {
        if case .sortedSet = self { true } else { false }
    }

    /// What a scheduler of this strategy declares, without making one: `capacity`, `maximumDuration` as its initializer takes them.
    public func profile(
        capacity: Int? = nil, maximumDuration: Duration = CountdownLimits.defaultMaximumDuration
    ) -> CountdownProfile {
        switch self {
        case .sortedSet(let tolerance, let shards, _):
            CountdownProfile(
                name: "redis", variant: variant,
                mechanism: "deadlines in a Redis sorted set, each operation one Lua script timed by the server's clock; "
                    + "a thread per member sleeps to the earliest deadline and claims what is due with one script; ticks computed where the observer is",
                threads: shards > 1
                    ? "\(1 + 2 * shards) per scheduler (its ticks, a claimer and an inbox reader per shard), whatever the count; and Redis'"
                    : "three per scheduler (its ticks, its claimer, its inbox reader), whatever the count; and Redis'",
                suspension: .keepsDeadline, wallClockJump: .immune, drift: .bounded, slowObserver: .delaysDeliveryOnly,
                capacity: capacity, maximumDuration: maximumDuration, tolerance: tolerance, sharing: .fleet)
        case .keyspaceNotifications:
            CountdownProfile(
                name: "redis", variant: variant,
                mechanism: "a Redis key with a TTL per countdown (SET … PX); the finish is the keyspace notification of its expiry, "
                    + "sent when Redis deletes the key; ticks computed where the observer is",
                threads: "two per scheduler (its ticker, its subscriber), whatever the count; and Redis'",
                suspension: .keepsDeadline, wallClockJump: .immune, drift: .bounded, slowObserver: .delaysDeliveryOnly,
                capacity: nil, maximumDuration: maximumDuration, sharing: .fleet)
        }
    }

    private static func compact(_ duration: Duration) -> String {
        let nanoseconds = duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000
        if nanoseconds % 1_000_000 == 0 { return "\(nanoseconds / 1_000_000)ms" }
        if nanoseconds % 1_000 == 0 { return "\(nanoseconds / 1_000)µs" }
        return "\(nanoseconds)ns"
    }
}
