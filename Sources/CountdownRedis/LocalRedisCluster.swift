#if Redis
import CountdownSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Redis Cluster of our own on loopback ports: `masters` masters, each with one replica (or none), the
/// slots split as `redis-cli --cluster create` splits them (master i holds the i-th share).
/// Made with the cluster commands themselves (`CLUSTER MEET`, `ADDSLOTSRANGE`, `REPLICATE`), so
/// that nothing but `redis-server` is needed. Each node is a ``LocalRedisServer``: stopped by its
/// process id, with its directory, when the cluster is removed or released.
package final class LocalRedisCluster: Sendable {
    /// The masters, in slot order, then their replicas (replica i follows master i).
    package let nodes: [LocalRedisServer]
    package let masters: Int
    package let replicas: Bool

    /// Where clients start: the first master. Every other node is found through redirects.
    package var endpoint: RedisEndpoint { nodes[0].endpoint }

    /// `replicas`: one per master (what a deployment runs, and what a failover needs), or none
    /// (a measurement that wants the masters' CPU only).
    package init(masters: Int = 3, replicas: Bool = true) throws(LocalRedisServer.StartError) {
        self.masters = masters
        self.replicas = replicas
        // A replica that never synchronized cannot be promoted: no five-second wait before the
        // first (diskless) synchronization.
        let settings = [
            "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "1000",
            "--repl-diskless-sync-delay", "0",
        ]
        var nodes: [LocalRedisServer] = []
        for _ in 0..<(replicas ? 2 * masters : masters) { nodes.append(try LocalRedisServer(extraSettings: settings)) }
        self.nodes = nodes
        do {
            try form()
        } catch {
            remove()
            throw LocalRedisServer.StartError(description: "the cluster did not form: \(error)")
        }
    }

    deinit { remove() }

    /// Stops every node and removes their directories.
    package func remove() { for node in nodes { node.remove() } }

    /// The first and last slot master `index` holds, as `redis-cli --cluster create` splits them.
    package static func slots(of index: Int, masters: Int) -> ClosedRange<Int> {
        let share = Double(ClusterSlot.count) / Double(masters)
        let first = index == 0 ? 0 : Int((Double(index) * share - 1).rounded()) + 1
        let last = index == masters - 1 ? ClusterSlot.count - 1 : Int((Double(index + 1) * share - 1).rounded())
        return first...last
    }

    /// A key `prefix{tag}` whose slot master `index` holds (as the cluster was formed): what a
    /// command sent straight to that master may name.
    package func key(onMaster index: Int, prefix: String) -> String {
        let slots = Self.slots(of: index, masters: masters)
        var tag = 0
        while !slots.contains(ClusterSlot.of("{\(tag)}")) { tag += 1 }
        return "\(prefix){\(tag)}"
    }

    /// The node that serves `slot` now, as the first living node answers `CLUSTER SLOTS`.
    package func master(of slot: Int) throws -> String? {
        for node in nodes where node.isRunning {
            let ranges = ClusterMap.ranges(try RedisConnection(node.endpoint).call(["CLUSTER", "SLOTS"])) ?? []
            return ranges.first { $0.slots.contains(slot) }?.node.hostAndPort
        }
        return nil
    }

    /// Waits until every living node says the cluster is up and serves every slot, and every
    /// living replica is in sync with its master, at most `timeout`.
    @discardableResult
    package func waitUntilServing(timeout: Duration = .seconds(20)) -> Bool {
        let deadline = SystemClocks.monotonic() + UInt64(timeout.nanoseconds)
        while SystemClocks.monotonic() < deadline {
            let ok = nodes.filter(\.isRunning).allSatisfy { node in
                guard let c = try? RedisConnection(node.endpoint, timeout: .milliseconds(500)),
                      let info = try? c.call(["CLUSTER", "INFO"]).text,
                      let replication = try? c.call(["INFO", "replication"]).text else { return false }
                return info.contains("cluster_state:ok") && info.contains("cluster_slots_ok:\(ClusterSlot.count)")
                    && (replication.contains("role:master") || replication.contains("master_link_status:up"))
            }
            if ok { return true }
            usleep(50_000)
        }
        return false
    }

    private func form() throws {
        let connections = try nodes.map { node throws(RedisFailure) in try RedisConnection(node.endpoint) }
        for node in nodes.dropFirst() {
            guard case .tcp(let host, let port) = node.endpoint.address else { continue }
            try expectOK(connections[0].call(["CLUSTER", "MEET", host, String(port)]))
        }
        for index in 0..<masters {
            let slots = Self.slots(of: index, masters: masters)
            try expectOK(connections[index].call(["CLUSTER", "ADDSLOTSRANGE", String(slots.lowerBound), String(slots.upperBound)]))
        }
        let ids = try connections.map { c throws(RedisFailure) in try c.call(["CLUSTER", "MYID"]).text ?? "" }
        for replica in masters..<nodes.count {
            // A replica follows its master once gossip has told it of that node.
            let master = ids[replica - masters]
            var known = false
            for _ in 0..<200 where !known {
                known = try connections[replica].call(["CLUSTER", "NODES"]).text?.contains(master) ?? false
                if !known { usleep(25_000) }
            }
            try expectOK(connections[replica].call(["CLUSTER", "REPLICATE", master]))
        }
        guard waitUntilServing() else { throw RedisFailure.server("not every node reached cluster_state:ok within 20 s") }
    }

    private func expectOK(_ reply: RedisReply) throws {
        if case .error(let text) = reply { throw RedisFailure.server(text) }
    }
}
#endif
