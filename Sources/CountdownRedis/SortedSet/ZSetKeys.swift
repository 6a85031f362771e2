#if Redis
/// The sorted set's kinds of key under the namespace `P` (see ``ZSetScripts``), as Lua
/// expressions: what the scripts check before they run anything (``RedisScript``) and what
/// `init` asks of the user's grants (``permissions``).
enum ZSetKeys {
    static let hash = "P .. ':c:'", inbox = "P .. ':i:'", processing = "P .. ':w:'", deadlines = "P .. ':d'"
    static let paused = "P .. ':p'", serial = "P .. ':seq'", members = "P .. ':m'", records = "P .. ':a:'"

    /// Every command a member of `redis(zset)` sends, on each kind of key it sends it on (the
    /// scripts', the inbox reader's, the connection's own), but `SCRIPT LOAD` and `EVALSHA`,
    /// without which the probe is refused by name itself.
    static let permissions = PermissionProbe(asks: [
        .init("PING"), .init("SELECT", "'0'"), .init("INFO", "'memory'"), .init("TIME"),
        .init("HGET", hash), .init("HMGET", hash), .init("HSET", hash), .init("HDEL", hash), .init("DEL", hash),
        .init("ZCARD", deadlines), .init("ZRANGE", deadlines), .init("ZRANGEBYSCORE", deadlines), .init("ZSCORE", deadlines),
        .init("ZADD", deadlines), .init("ZREM", deadlines),
        .init("SCARD", paused), .init("SMEMBERS", paused), .init("SISMEMBER", paused), .init("SADD", paused), .init("SREM", paused),
        .init("INCRBY", serial), .init("ZADD", members), .init("ZRANGEBYSCORE", members), .init("ZREM", members),
        .init("HGET", records), .init("HSET", records), .init("DEL", records),
        .init("RPUSH", inbox), .init("PEXPIRE", inbox), .init("LPOP", inbox), .init("DEL", inbox),
        .init("BLMOVE", inbox, processing), .init("LRANGE", processing), .init("RPUSH", processing), .init("PEXPIRE", processing),
        .init("DEL", processing),
    ])

    /// What starts acknowledged by replicas send besides (``ReplicaWait``).
    static let replicaPermissions = PermissionProbe(asks: [.init("WAIT", "'1'", "'1'", label: "WAIT")])
}
#endif
