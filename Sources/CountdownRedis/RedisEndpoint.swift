/// Where a Redis server listens: `127.0.0.1:6379`.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// A host name or an IP address (IPv6 without brackets).
    public var host: String
    /// The TCP port, 1 to 65535.
    public var port: Int

    /// The server at `host`, `port`.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `text` as `HOST:PORT` (an IPv6 host in brackets: `[::1]:6379`); nil when it is not one.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (1...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { return nil }
        self.init(host: host, port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
