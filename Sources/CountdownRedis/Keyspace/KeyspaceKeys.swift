#if Redis
/// The keyspace strategy's kinds of key and its channels under the namespace `P` (see
/// ``KeyspaceScripts``), as Lua expressions: what the scripts check before they run anything
/// (``RedisScript``) and what `init` asks of the user's grants (``permissions``).
enum KeyspaceKeys {
    static let countdown = "P .. ':t:'", serial = "P .. ':seq'", records = "P .. ':a:'", channel = "P .. ':own'"

    /// Every command a member of `redis(keyspace)` sends, on each kind of key or channel it
    /// sends it on, but `SCRIPT LOAD` and `EVALSHA` (without which the probe is refused by name
    /// itself). The expired events' channel is asked of database 0's; `CONFIG GET` is needed
    /// to see that the server notifies them.
    static let permissions = PermissionProbe(asks: [
        .init("PING"), .init("SELECT", "'0'"), .init("INFO", "'memory'"), .init("TIME"),
        .init("GET", countdown), .init("SET", countdown), .init("DEL", countdown), .init("PEXPIRETIME", countdown),
        .init("INCR", serial), .init("HGET", records), .init("HSET", records), .init("PEXPIRE", records),
        .init("PUBLISH", channel), .init("SUBSCRIBE", channel), .init("SUBSCRIBE", "'__keyevent@0__:expired'"),
        .init("SCAN", "'0'"), .init("CONFIG", "'GET'", "'notify-keyspace-events'", label: "CONFIG GET notify-keyspace-events"),
    ])
}
#endif
