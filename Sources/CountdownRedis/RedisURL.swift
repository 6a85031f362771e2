/// The Redis URL convention, read by hand rather than by `URLComponents` so that it reads the
/// same on every platform (an IPv6 host in brackets, a Unix socket's path, percent-encoded
/// credentials), and so that no error it gives carries the password.
enum RedisURL {
    static let defaultPort = 6379

    static func parse(_ url: String) throws(RedisEndpointError) -> RedisEndpoint {
        guard let separator = url.range(of: "://") else { throw .invalid(url: redacted(url), "no scheme (redis://, unix://)") }
        let scheme = url[..<separator.lowerBound].lowercased()
        var rest = Substring(url[separator.upperBound...])
        let shown = redacted(url)
        switch scheme {
        case "redis": break
        case "unix": break
        case "rediss": throw .tlsUnavailable(url: shown)
        default: throw .invalid(url: shown, "the scheme \(scheme):// is not redis://, unix:// (or rediss://)")
        }
        // Credentials: everything before the last "@" that comes before the path.
        var username: String?, password: String?
        let authorityEnd = scheme == "unix" ? (rest.firstIndex(of: "/") ?? rest.endIndex) : (rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex)
        if let at = rest[..<authorityEnd].lastIndex(of: "@") {
            let userinfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let user: Substring
            if let colon = userinfo.firstIndex(of: ":") {
                user = userinfo[..<colon]
                guard let decoded = decoded(userinfo[userinfo.index(after: colon)...]) else {
                    throw .invalid(url: shown, "the password is not valid percent-encoding")
                }
                password = decoded
            } else {
                user = userinfo
            }
            if !user.isEmpty {
                guard let decoded = decoded(user) else { throw .invalid(url: shown, "the user is not valid percent-encoding") }
                username = decoded
            }
        }
        // The query: `db`, and the timeouts by redis-py's names, in seconds (`timeout` is
        // `socket_timeout`): a server's configuration often holds only its REDIS_URL.
        var database = 0
        var fromQuery: Int?
        var connectTimeout: Duration?, commandTimeout: Duration?
        if let question = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: question)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                let value = parts.count == 2 ? parts[1] : ""
                switch parts.count == 2 ? parts[0] : "" {
                case "db":
                    guard let number = Int(value), number >= 0 else { throw .invalid(url: shown, "db must be a number 0 or more, not \(value)") }
                    fromQuery = number
                case "socket_timeout", "timeout":
                    commandTimeout = try seconds(value, parts[0], shown)
                case "socket_connect_timeout":
                    connectTimeout = try seconds(value, parts[0], shown)
                default:
                    throw .invalid(url: shown, "the query takes db, socket_timeout (or timeout) and socket_connect_timeout, not \(pair)")
                }
            }
            rest = rest[..<question]
        }
        let address: RedisEndpoint.Address
        var seeds: [RedisEndpoint.Address] = []
        if scheme == "unix" {
            guard rest.hasPrefix("/"), rest.count > 1 else { throw .invalid(url: shown, "a unix:// URL needs the socket's absolute path: unix:///run/redis.sock") }
            address = .unix(path: String(rest))
        } else {
            let hostPort: Substring
            if let slash = rest.firstIndex(of: "/") {
                let path = rest[rest.index(after: slash)...]
                if !path.isEmpty {
                    guard let number = Int(path), number >= 0 else { throw .invalid(url: shown, "the path must be a database number, not /\(path)") }
                    database = number
                }
                hostPort = rest[..<slash]
            } else {
                hostPort = rest
            }
            // A cluster's seed nodes, as cluster clients take them: host:port,host:port,…
            let nodes = try hostPort.split(separator: ",", omittingEmptySubsequences: false).map { (node: Substring) throws(RedisEndpointError) -> RedisEndpoint.Address in
                try tcp(node, shown)
            }
            address = nodes[0]
            seeds = Array(nodes.dropFirst())
        }
        if let fromQuery { database = fromQuery }
        var endpoint = RedisEndpoint(address, username: username, password: password, database: database)
        endpoint.seeds = seeds
        if let connectTimeout { endpoint.connectTimeout = connectTimeout }
        if let commandTimeout { endpoint.commandTimeout = commandTimeout }
        return endpoint
    }

    /// A timeout of the query: seconds, more than 0 and at most a day (`0.5`, `3`).
    private static func seconds(_ text: Substring, _ name: Substring, _ shown: String) throws(RedisEndpointError) -> Duration {
        guard let value = Double(text), value > 0, value <= 86_400 else {
            throw .invalid(url: shown, "\(name) must be seconds, more than 0 and at most a day, not \(text)")
        }
        return .nanoseconds(Int64((value * 1e9).rounded()))
    }

    private static func tcp(_ text: Substring, _ shown: String) throws(RedisEndpointError) -> RedisEndpoint.Address {
        var host: Substring, portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw .invalid(url: shown, "an IPv6 host's bracket is not closed") }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw .invalid(url: shown, "after an IPv6 host's bracket comes :PORT or nothing") }
                portText = after.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            guard !portText!.contains(":") else { throw .invalid(url: shown, "an IPv6 host goes in brackets: redis://[::1]:6379") }
        } else {
            host = text
        }
        guard !host.isEmpty else { throw .invalid(url: shown, "no host") }
        var port = defaultPort
        if let portText {
            guard let number = Int(portText), (1...65535).contains(number) else { throw .invalid(url: shown, "the port must be 1 to 65535, not \(portText)") }
            port = number
        }
        return .tcp(host: String(host), port: port)
    }

    /// `url` with its password replaced by `***`, for messages.
    static func redacted(_ url: String) -> String {
        guard let separator = url.range(of: "://") else {
            // Not a URL: it may still be `user:secret@host`; show nothing before an "@".
            return url.lastIndex(of: "@").map { "***@" + url[url.index(after: $0)...] } ?? url
        }
        let rest = url[separator.upperBound...]
        let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        guard let at = rest[..<end].lastIndex(of: "@") else { return url }
        let userinfo = rest[..<at]
        let user = userinfo.firstIndex(of: ":").map { userinfo[..<$0] + ":***" } ?? userinfo
        return String(url[..<separator.upperBound]) + user + rest[at...]
    }

    /// Percent-decoding, without Foundation; nil for a malformed escape or bytes that are not UTF-8.
    static func decoded(_ text: Substring) -> String? {
        let input = Array(text.utf8)
        var bytes: [UInt8] = []
        var index = 0
        while index < input.count {
            if input[index] == UInt8(ascii: "%") {
                guard index + 2 < input.count, let high = hex(input[index + 1]), let low = hex(input[index + 2]) else { return nil }
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(input[index])
                index += 1
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// `text` percent-encoded where a URL's userinfo needs it.
    static func encoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if byte < 0x80, c.isLetter || c.isNumber || "-._~".contains(c) { out.append(c) } else { out += "%" + String(byte, radix: 16, uppercase: true).leftPadded }
        }
        return out
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

private extension String {
    /// Two hex digits.
    var leftPadded: String { count == 1 ? "0" + self : self }
}
