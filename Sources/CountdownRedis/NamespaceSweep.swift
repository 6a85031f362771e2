#if Redis
import Countdown

/// Deletes every key of some namespaces on a server or cluster: `{NAMESPACE}…` and its shards'
/// `{NAMESPACE:…`, found with `SCAN MATCH` on every master (the one the endpoint names when no
/// slot map is read). What the benchmark does when it ends on a user's server, so that it leaves
/// the server as it found it; its user needs `+scan`, and `+del` on those keys.
package enum NamespaceSweep {
    /// Deletes the keys; how many it deleted. Throws at the first refusal (`.authentication`
    /// without `+scan`), having deleted what it found before it.
    package static func delete(_ namespaces: [String], at endpoint: RedisEndpoint) throws(CountdownError) -> Int {
        guard !namespaces.isEmpty else { return 0 }
        var deleted = 0
        for node in masters(of: endpoint).nodes {
            let admin = try RedisAdmin(endpoint.at(node))
            for namespace in namespaces {
                for pattern in patterns(namespace) { deleted += try admin.deleteKeys(matching: pattern) }
            }
        }
        return deleted
    }

    /// The server's slot map, read now, and every master it names (the endpoint's own node when
    /// it names none: a single server, or a user without `cluster|slots`).
    static func masters(of endpoint: RedisEndpoint) -> (map: ClusterMap, nodes: [RedisEndpoint.Address]) {
        let map = ClusterMap(endpoint)
        map.read()
        return (map, map.masters.isEmpty ? [endpoint.address] : map.masters)
    }

    /// `{NAMESPACE}*` and `{NAMESPACE:*`, the namespace's glob characters escaped.
    static func patterns(_ namespace: String) -> [String] {
        let escaped = namespace.reduce(into: "") { text, character in
            if "*?[]\\".contains(character) { text.append("\\") }
            text.append(character)
        }
        return ["{\(escaped)}*", "{\(escaped):*"]
    }
}
#endif
