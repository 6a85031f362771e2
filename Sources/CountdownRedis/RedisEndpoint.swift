/// Where a Redis server listens and how to be let in: an address (TCP or a Unix socket), the
/// ACL user and password sent with `AUTH`, the database chosen with `SELECT`, and how long to
/// wait. Every connection, and every reconnection, authenticates and selects before anything
/// else.
///
/// ```swift
/// let endpoint = try RedisEndpoint(url: ProcessInfo.processInfo.environment["REDIS_URL"] ?? "redis://127.0.0.1:6379")
/// ```
///
/// The password is a secret: ``description``, `debugDescription`, `dump` and every error show
/// the URL without it.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Where the server listens.
    public enum Address: Sendable, Hashable {
        /// A host name or an IP address (IPv6 without brackets), and a TCP port, 1 to 65535.
        case tcp(host: String, port: Int)
        /// A Unix domain socket's path.
        case unix(path: String)
    }

    /// Where the server listens.
    public var address: Address
    /// The ACL user `AUTH` names; nil: the default user (`AUTH password` alone).
    public var username: String?
    /// The password `AUTH` sends; nil: no `AUTH`.
    public var password: String?
    /// The database `SELECT` chooses (0, the default, sends none).
    public var database: Int
    /// How long a connection may take to be made.
    public var connectTimeout: Duration
    /// How long a command waits for its answer before the call fails (`.timeout`) and is sent
    /// again on a new connection, within the call's patience.
    public var commandTimeout: Duration
    /// The TCP keepalive interval, so that a peer gone without a word is noticed; nil: off.
    public var keepAlive: Duration?
    /// Other nodes of the same Redis Cluster (`redis://h1:7000,h2:7001,h3:7002`): where the
    /// cluster's slot map is asked for when ``address`` cannot be reached, so that no one node
    /// must stay up. Empty for a single server.
    public var seeds: [Address] = []

    /// The server at `host`, `port`, with no password, database 0, and the default timeouts.
    public init(host: String, port: Int) {
        self.init(.tcp(host: host, port: port))
    }

    /// The server at `address`; `username`, `password`, `database`, `connectTimeout`,
    /// `commandTimeout` and `keepAlive` are the properties of the same names.
    public init(
        _ address: Address, username: String? = nil, password: String? = nil, database: Int = 0,
        connectTimeout: Duration = defaultConnectTimeout, commandTimeout: Duration = defaultCommandTimeout, keepAlive: Duration? = .seconds(15)
    ) {
        self.address = address
        self.username = username
        self.password = password
        self.database = database
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.keepAlive = keepAlive
    }

    /// Parses `text` as `HOST:PORT` (an IPv6 host in brackets: `[::1]:6379`); nil when it is not one.
    public init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (1...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains("/"), !host.contains("@") else { return nil }
        self.init(host: host, port: port)
    }

    /// Parses `url`, a Redis URL as every Redis client takes one (and `REDIS_URL` holds):
    /// `redis://[user[:password]@]host[:port][/db]` (an IPv6 host in brackets, port 6379 by
    /// default), or `unix://[user[:password]@]/path/redis.sock[?db=N]`. User and password are
    /// percent-decoded.
    ///
    /// - Throws: ``RedisEndpointError`` for any other text, naming what is wrong without the
    ///   password; `rediss://` (TLS) is refused with why: the hiredis this builds on has none.
    public init(url: String) throws(RedisEndpointError) {
        self = try RedisURL.parse(url)
    }

    /// Parses `text` as a URL when it has a scheme (`redis://…`), else as `HOST:PORT`: what the
    /// benchmark's `--redis` takes.
    public static func parse(_ text: String) throws(RedisEndpointError) -> RedisEndpoint {
        if text.contains("://") { return try RedisEndpoint(url: text) }
        guard let endpoint = RedisEndpoint(text) else { throw .invalid(url: RedisURL.redacted(text), "not HOST:PORT nor a redis:// URL") }
        return endpoint
    }

    /// The endpoint as a URL with the password left out: `redis://user:***@host:6379/2`.
    public var description: String { url(showingPassword: false) }

    /// The URL with its password, for a child process's environment (`REDIS_URL`), never for
    /// its arguments, a log or a file.
    package var secretURL: String { url(showingPassword: true) }

    /// `host:port` of a TCP endpoint (an IPv6 host in brackets): what a proxy passes
    /// connections on to. Nil for a Unix socket.
    package var hostAndPort: String? { address.hostAndPort }

    /// The same credentials, database and timeouts, at `address`: how a fleet member reaches
    /// the store through the suite's proxy.
    package func at(_ address: Address) -> RedisEndpoint {
        var moved = self
        moved.address = address
        return moved
    }

    /// The time to connect allowed when none is given (the URL's `socket_connect_timeout`): 2 s.
    public static let defaultConnectTimeout: Duration = .seconds(2)
    /// The time to answer a call allowed when none is given (the URL's `socket_timeout`): 5 s.
    public static let defaultCommandTimeout: Duration = .seconds(5)

    /// `duration` in seconds as a URL's query says it: `0.5`, `3`.
    private static func seconds(_ duration: Duration) -> String {
        let value = Double(duration.nanoseconds) / 1e9
        return value == value.rounded() ? String(Int64(value)) : String(value)
    }

    private func url(showingPassword: Bool) -> String {
        var userinfo = username.map { RedisURL.encoded($0) } ?? ""
        if let password { userinfo += ":" + (showingPassword ? RedisURL.encoded(password) : "***") }
        let credentials = userinfo.isEmpty ? "" : userinfo + "@"
        // Timeouts other than the defaults go in the query, so that a child process given the
        // URL (REDIS_URL) waits as this one does.
        var query: [String] = []
        if connectTimeout != Self.defaultConnectTimeout { query.append("socket_connect_timeout=\(Self.seconds(connectTimeout))") }
        if commandTimeout != Self.defaultCommandTimeout { query.append("socket_timeout=\(Self.seconds(commandTimeout))") }
        switch address {
        case .tcp:
            let nodes = ([address] + seeds).compactMap(\.hostAndPort).joined(separator: ",")
            return "redis://\(credentials)\(nodes)" + (database == 0 ? "" : "/\(database)")
                + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        case .unix(let path):
            if database != 0 { query.insert("db=\(database)", at: 0) }
            return "unix://\(credentials)\(path)" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
        }
    }

    /// The same as ``description``: the password never shows.
    public var debugDescription: String { description }

    /// What `dump` and a debugger show: the endpoint without its password.
    public var customMirror: Mirror {
        Mirror(self, children: ["url": description, "connectTimeout": connectTimeout, "commandTimeout": commandTimeout], displayStyle: .struct)
    }
}

extension RedisEndpoint.Address {
    /// `host:port` (an IPv6 host in brackets); nil for a Unix socket.
    var hostAndPort: String? {
        guard case .tcp(let host, let port) = self else { return nil }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

/// Why a Redis URL was refused. Its text names what is wrong and shows the URL with its
/// password left out.
public enum RedisEndpointError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not a URL this package takes: the URL (without its password), and why.
    case invalid(url: String, String)
    /// `rediss://`: TLS, which the hiredis this package builds on (0.14, as Debian ships it) has
    /// no support for. Run a TLS tunnel (stunnel, spiped, or the cloud provider's proxy) to a
    /// loopback port, and give `redis://127.0.0.1:PORT`.
    case tlsUnavailable(url: String)

    /// What is wrong, with the URL shown without its password.
    public var description: String {
        switch self {
        case .invalid(let url, let why): "not a Redis URL (\(url)): \(why)"
        case .tlsUnavailable(let url):
            "\(url): rediss:// (TLS) is not supported: the hiredis this package builds on (0.14, as Debian ships it) has no TLS. "
                + "Run a TLS tunnel (stunnel, spiped, or your provider's proxy) to a loopback port and give redis://127.0.0.1:PORT"
        }
    }
}
