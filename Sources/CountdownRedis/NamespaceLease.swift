#if Redis
import Countdown
import CountdownSupport

/// A run's hold on its namespace, so that a later run can tell keys left by one that was killed
/// from keys of one still running: the hash `{NAMESPACE}:lease`, its TTL a minute, renewed every
/// ten seconds (`HSET`, `PEXPIRE`: commands `redis(zset)`'s grant has). The benchmark holds one
/// for its run; at its start it deletes the namespaces under its root that hold keys and no
/// lease (``abandoned(under:except:at:)``).
package final class NamespaceLease: Sendable {
    static let lifetime: Int64 = 60_000_000_000, renewal: Int64 = 10_000_000_000

    private let ticker: FleetTicker
    private let stopped: Locked<Bool>

    /// Takes the lease on `namespace` now (throws when it cannot), and keeps it until ``stop()``.
    package init(_ namespace: String, at endpoint: RedisEndpoint) throws(CountdownError) {
        let admin = try RedisAdmin(endpoint, route: ClusterRoute(map: NamespaceSweep.masters(of: endpoint).map, slot: ClusterSlot.of("{\(namespace)}")))
        let key = "{\(namespace)}:lease"
        let renew = { @Sendable () throws(CountdownError) in
            _ = try admin.command(["HSET", key, "held", "1"])
            _ = try admin.command(["PEXPIRE", key, String(Self.lifetime / 1_000_000)])
        }
        try renew()
        let stopped = Locked(false)
        self.stopped = stopped
        ticker = FleetTicker(name: "cd-redis-lease") { now in
            if stopped.withLock({ $0 }) { return .stop }
            // A renewal that fails is tried again at the next: a minute leaves five more.
            try? renew()
            return .at(now + Self.renewal)
        }
    }

    /// Renews it no more, once a renewal under way is over (its key is the namespace's:
    /// deleted with the rest, and nothing writes it again).
    package func stop() {
        stopped.withLock { $0 = true }
        ticker.wake()
        _ = ticker.waitForEnd(timeout: .seconds(10))
    }

    /// The namespaces directly under `root` (`root:X`, X not `own`) whose keys are on the server
    /// and whose lease is not: left by a run that ended without deleting them.
    package static func abandoned(under root: String, except own: String, at endpoint: RedisEndpoint) throws(CountdownError) -> [String] {
        let (map, nodes) = NamespaceSweep.masters(of: endpoint)
        var runs: Set<String> = []
        for node in nodes {
            let admin = try RedisAdmin(endpoint.at(node))
            for key in try admin.keys(matching: NamespaceSweep.patterns(root)[1]) {
                // `{root:X}…` or `{root:X:…}…`: X is the run.
                let rest = key.dropFirst(root.count + 2)
                if let end = rest.firstIndex(where: { $0 == ":" || $0 == "}" }) { runs.insert(String(rest[..<end])) }
            }
        }
        var abandoned: [String] = []
        for run in runs.sorted() where run != own {
            let namespace = "\(root):\(run)"
            let admin = try RedisAdmin(endpoint, route: ClusterRoute(map: map, slot: ClusterSlot.of("{\(namespace)}")))
            if try admin.command(["HGET", "{\(namespace)}:lease", "held"]) == .null { abandoned.append(namespace) }
        }
        return abandoned
    }
}
#endif
