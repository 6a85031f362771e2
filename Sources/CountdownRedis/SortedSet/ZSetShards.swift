#if Redis
/// A namespace's countdowns spread over S hash tags, its shards: each shard keeps its own sorted
/// set, hashes, members, inboxes and call records under its own prefix, so that Redis Cluster
/// places each on a slot of its own and S nodes share the work (one tag is one slot, one core).
/// S = 1 is the single prefix `{namespace}`.
///
/// A key's shard is a stable hash of the key (FNV-1a over its UTF-8 bytes): every member of the
/// fleet, whatever its version of Swift, puts a key in the same shard. The tags are chosen so
/// that shard i's slot lies in the middle of the i-th S-th of the slot space, which a cluster
/// made with `redis-cli --cluster create` gives to its i-th master: the shards land on distinct
/// nodes.
struct ZSetShards: Sendable {
    /// Each shard's prefix, a hash tag: `{namespace}` alone, or `{namespace:n}`.
    let prefixes: [String]

    init(namespace: String, count: Int) {
        guard count > 1 else {
            prefixes = ["{\(namespace)}"]
            return
        }
        var prefixes: [String] = []
        var candidate = 0
        for shard in 0..<count {
            // The middle half of the shard's S-th: clear of where one tool or another rounds
            // the split between two masters (redis-cli gives 0–5460, 5461–10922, 10923–16383).
            let center = (2 * shard + 1) * ClusterSlot.count / (2 * count), reach = ClusterSlot.count / (4 * count)
            let range = (center - reach)..<(center + reach)
            while !range.contains(ClusterSlot.of("{\(namespace):\(candidate)}")) { candidate += 1 }
            prefixes.append("{\(namespace):\(candidate)}")
            candidate += 1
        }
        self.prefixes = prefixes
    }

    var count: Int { prefixes.count }

    /// The shard that keeps `key` (a canonical key).
    func index(of key: String) -> Int {
        guard count > 1 else { return 0 }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return Int(hash % UInt64(count))
    }

    func prefix(of key: String) -> String { prefixes[index(of: key)] }
}
#endif
