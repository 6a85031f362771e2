#if Redis
/// A Redis Cluster node's answer that the slot a command is for lives elsewhere: `MOVED slot
/// host:port` (the slot moved for good: the link goes there from now on) or `ASK slot host:port`
/// (a resharding is moving it: waited out, ``RedisFailure/isTransient``).
struct ClusterRedirect: Equatable, Sendable {
    enum Kind: Equatable, Sendable { case moved, ask }

    let kind: Kind
    let slot: Int
    let address: RedisEndpoint.Address

    /// Parses an error reply's text; nil for any other error.
    init?(_ text: String) {
        let fields = text.split(separator: " ")
        guard fields.count == 3, let slot = Int(fields[1]), let colon = fields[2].lastIndex(of: ":"),
              let port = Int(fields[2][fields[2].index(after: colon)...]) else { return nil }
        switch fields[0] {
        case "MOVED": kind = .moved
        case "ASK": kind = .ask
        default: return nil
        }
        var host = String(fields[2][..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.slot = slot
        address = .tcp(host: host, port: port)
    }

    init(kind: Kind, slot: Int, address: RedisEndpoint.Address) {
        (self.kind, self.slot, self.address) = (kind, slot, address)
    }

    init?(_ failure: RedisFailure) {
        guard case .server(let text) = failure else { return nil }
        self.init(text)
    }
}
#endif
