#if Redis
import Countdown

/// Redis' `maxmemory-policy`, read when a scheduler is made. A server that evicts keys to make
/// room (a Redis used as a cache: `allkeys-lru` and the like; the `volatile-` ones drop keys
/// with a TTL, as the keyspace strategy's countdowns and every inbox are) may drop a
/// countdown, the sorted set of deadlines or a message, and countdowns then vanish without a
/// word. BullMQ and Sidekiq read the policy at start-up too and warn unless it is
/// `noeviction`; a scheduler refuses to start on it unless its caller allows it knowingly.
enum EvictionPolicy {
    static let safe = "noeviction"

    /// Throws `CountdownError/invalidConfiguration(_:)` when the server `admin` reaches may evict
    /// keys and `allowed` is false; `.unavailable(.authentication, …)` naming `INFO` when the
    /// user may not read it.
    static func check(_ admin: RedisAdmin, allowed: Bool, node: String? = nil) throws(CountdownError) {
        if allowed { return }
        let policy: String
        do {
            policy = try admin.maxmemoryPolicy()
        } catch {
            guard case .unavailable(let reason, let text) = error else { throw error }
            throw .unavailable(reason, "reading the server's maxmemory-policy (INFO memory): \(text)")
        }
        guard policy == safe else {
            throw .invalidConfiguration(
                "Redis' maxmemory-policy is \(policy)\(node.map { " on the cluster's master \($0)" } ?? ""): when it is full it may evict a countdown, the sorted set of deadlines or a message between members, and countdowns would vanish without a word. Set it to \(safe) (CONFIG SET maxmemory-policy \(safe), or in redis.conf), or pass evictionAllowed: true to accept that")
        }
    }
}
#endif
