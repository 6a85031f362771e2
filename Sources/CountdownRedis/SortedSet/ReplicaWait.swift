#if Redis
import Countdown

/// A start's `WAIT`, sent on the start's own connection right after it, in the same write: it
/// answers once `replicas.count` replicas hold everything this connection wrote before it.
/// Sent again with its start after a broken connection; a start then answered from its record
/// writes the record again (``CallRecord``), so that the `WAIT` after it waits for a write at
/// least as late as the start's own. `WAIT`s queued together go as one (``PipeLoop``).
struct ReplicaWait: Sendable {
    let replicas: RedisReplicas

    /// `request`, then its `WAIT`.
    func requests(after request: RedisPipe.Request) -> [RedisPipe.Request] {
        [request, .command(["WAIT", String(replicas.count), String(replicas.milliseconds)])]
    }

    /// Throws unless the `WAIT`'s reply (the last of `replies`) says enough replicas acknowledged.
    func check(_ replies: [RedisReply]) throws(CountdownError) {
        let acknowledged = replies.last?.int ?? -1
        guard acknowledged >= Int64(replicas.count) else {
            throw .unavailable(.notReplicated, """
                the start was made on the master, but \(max(acknowledged, 0)) of the \(replicas.count) replicas asked for \
                acknowledged it within \(replicas.milliseconds) ms: a failover now may lose it; starting again is safe
                """)
        }
    }
}
#endif
