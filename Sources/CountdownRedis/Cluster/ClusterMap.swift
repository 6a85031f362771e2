#if Redis
import CountdownSupport

/// Which node of a Redis Cluster serves each slot, as `CLUSTER SLOTS` answers it, read from
/// any node that answers: the endpoint's address, its ``RedisEndpoint/seeds``, and every node
/// a map named since. Shared by a member's connections: one that fails asks the map for its
/// slot's node again (re-read, the failed node asked last), so that losing any one node, the
/// one named in the URL too, costs a failover's pause and not the shard. On a single server
/// (`CLUSTER SLOTS` refused: cluster support disabled, or not granted) there is no map, and a
/// connection goes back to the endpoint, as before.
final class ClusterMap: Sendable {
    private struct State {
        var known: [RedisEndpoint.Address]
        /// Each range's master, in the order the server listed them.
        var owners: [(slots: ClosedRange<Int>, node: RedisEndpoint.Address)] = []
        var readAt: UInt64 = 0
        var reading = false
    }

    let endpoint: RedisEndpoint
    private let state: Locked<State>
    /// At most one read of the map this often, however many connections fail at once.
    static let interval: UInt64 = 100_000_000

    init(_ endpoint: RedisEndpoint) {
        self.endpoint = endpoint
        state = Locked(State(known: [endpoint.address] + endpoint.seeds))
    }

    /// Every master the map names, each once, in slot order; empty without a map.
    var masters: [RedisEndpoint.Address] {
        state.withLock { s in s.owners.map(\.node).reduce(into: []) { if !$0.contains($1) { $0.append($1) } } }
    }

    /// Where `slot` is served, as the map last read says; nil without a map.
    func node(of slot: Int) -> RedisEndpoint.Address? {
        state.withLock { s in s.owners.first { $0.slots.contains(slot) }?.node }
    }

    /// The node a connection for `slot` should go to after `failed` could not be reached: the
    /// map read again (unless read in the last 100 ms), then its node for the slot; nil: the
    /// endpoint (no map).
    func node(of slot: Int, after failed: RedisEndpoint.Address) -> RedisEndpoint.Address? {
        read(failed: failed)
        return node(of: slot)
    }

    /// Reads `CLUSTER SLOTS` from the first node that answers, `failed` last.
    func read(failed: RedisEndpoint.Address? = nil) {
        let candidates = state.withLock { s -> [RedisEndpoint.Address]? in
            let now = SystemClocks.monotonic()
            guard !s.reading, s.readAt == 0 || now - s.readAt >= Self.interval else { return nil }
            s.reading = true
            return s.known.filter { $0 != failed } + (failed.map { [$0] } ?? [])
        }
        guard let candidates else { return }
        var read: [(slots: ClosedRange<Int>, node: RedisEndpoint.Address, others: [RedisEndpoint.Address])]?
        for address in candidates {
            guard let connection = try? RedisConnection(endpoint.at(address), timeout: .milliseconds(500)),
                  let reply = try? connection.call(["CLUSTER", "SLOTS"]) else { continue }
            read = Self.ranges(reply)
            break
        }
        state.withLock { s in
            s.reading = false
            s.readAt = SystemClocks.monotonic()
            guard let read else { return }
            s.owners = read.map { ($0.slots, $0.node) }
            for node in read.flatMap({ [$0.node] + $0.others }) where !s.known.contains(node) { s.known.append(node) }
        }
    }

    /// `CLUSTER SLOTS`: per range {first, last, {host, port, id}, replicas…}; nil when refused.
    static func ranges(_ reply: RedisReply) -> [(slots: ClosedRange<Int>, node: RedisEndpoint.Address, others: [RedisEndpoint.Address])]? {
        if case .error = reply { return nil }
        return reply.elements.compactMap { range in
            let fields = range.elements
            guard fields.count >= 3, let first = fields[0].int, let last = fields[1].int, first <= last else { return nil }
            let nodes = fields[2...].compactMap { node -> RedisEndpoint.Address? in
                let parts = node.elements
                guard parts.count >= 2, let host = parts[0].text, !host.isEmpty, let port = parts[1].int else { return nil }
                return .tcp(host: host, port: Int(port))
            }
            guard let master = nodes.first else { return nil }
            return (Int(first)...Int(last), master, Array(nodes.dropFirst()))
        }
    }
}

/// A connection's slot on a cluster's map: where it goes when its node fails.
struct ClusterRoute: Sendable {
    let map: ClusterMap
    let slot: Int

    /// The endpoint, or the map's node for the slot (read again, `failed` asked last) when
    /// `failed` could not be reached.
    func endpoint(after failed: RedisEndpoint.Address) -> RedisEndpoint? {
        map.node(of: slot, after: failed).map(map.endpoint.at)
    }

    /// A first connection: to the endpoint, or, when it cannot be reached, to the slot's node
    /// as the map read from another node says.
    static func connect(
        _ endpoint: RedisEndpoint, _ route: ClusterRoute?, commandTimeout: RedisConnection.CommandTimeout = .endpoint
    ) throws(RedisFailure) -> (RedisConnection, RedisEndpoint?) {
        do {
            return (try RedisConnection(endpoint, commandTimeout: commandTimeout), nil)
        } catch {
            guard error.isConnection, let route, let node = route.endpoint(after: endpoint.address) else { throw error }
            return (try RedisConnection(node, commandTimeout: commandTimeout), node)
        }
    }
}
#endif
