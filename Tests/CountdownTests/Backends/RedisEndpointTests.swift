import CountdownRedis
import Testing

/// Redis URLs as deployments write them, and a password that shows nowhere. No server: the
/// connections are `Redis/RedisDeploymentTests`.
@Suite("Redis endpoints")
struct RedisEndpointTests {
    @Test("redis:// with an ACL user, a password, a port and a database")
    func fullURL() throws {
        let endpoint = try RedisEndpoint(url: "redis://countdown:s3cr%40t%3Ax@cache.internal:6380/2")
        #expect(endpoint.address == .tcp(host: "cache.internal", port: 6380))
        #expect(endpoint.username == "countdown")
        #expect(endpoint.password == "s3cr@t:x", "percent-decoded")
        #expect(endpoint.database == 2)
    }

    @Test("the defaults: port 6379, database 0, no user, no password")
    func defaults() throws {
        let endpoint = try RedisEndpoint(url: "redis://10.0.0.5")
        #expect(endpoint.address == .tcp(host: "10.0.0.5", port: 6379))
        #expect(endpoint.username == nil && endpoint.password == nil && endpoint.database == 0)
        #expect(endpoint.description == "redis://10.0.0.5:6379")
        let slash = try RedisEndpoint(url: "redis://10.0.0.5:6379/")
        #expect(slash.database == 0)
    }

    @Test("a cluster's seed nodes, comma-separated as cluster clients take them; the URL written back the same; an empty one refused")
    func seeds() throws {
        let endpoint = try RedisEndpoint(url: "redis://countdown:pw@10.0.0.1:7000,10.0.0.2:7001,[::1]:7002")
        #expect(endpoint.address == .tcp(host: "10.0.0.1", port: 7000))
        #expect(endpoint.seeds == [.tcp(host: "10.0.0.2", port: 7001), .tcp(host: "::1", port: 7002)])
        #expect(endpoint.description == "redis://countdown:***@10.0.0.1:7000,10.0.0.2:7001,[::1]:7002")
        #expect(try RedisEndpoint(url: endpoint.description.replacingOccurrences(of: "***", with: "pw")) == endpoint)
        #expect(try RedisEndpoint(url: "redis://10.0.0.1:7000").seeds.isEmpty)
        #expect(throws: RedisEndpointError.self) { try RedisEndpoint(url: "redis://10.0.0.1:7000,,10.0.0.2") }
    }

    @Test("a password alone is the default user's")
    func passwordAlone() throws {
        let endpoint = try RedisEndpoint(url: "redis://:hunter2@127.0.0.1:6379/0")
        #expect(endpoint.username == nil && endpoint.password == "hunter2")
    }

    @Test("IPv6 in brackets")
    func ipv6() throws {
        #expect(try RedisEndpoint(url: "redis://[::1]:7000").address == .tcp(host: "::1", port: 7000))
        #expect(try RedisEndpoint(url: "redis://[fe80::1]").address == .tcp(host: "fe80::1", port: 6379))
        #expect(try RedisEndpoint(url: "redis://[::1]:7000").description == "redis://[::1]:7000")
        #expect(RedisEndpoint("[::1]:6379")?.address == .tcp(host: "::1", port: 6379))
    }

    @Test("a Unix socket, with its database in the query")
    func unixSocket() throws {
        let endpoint = try RedisEndpoint(url: "unix:///run/redis/redis.sock?db=3")
        #expect(endpoint.address == .unix(path: "/run/redis/redis.sock"))
        #expect(endpoint.database == 3)
        let withUser = try RedisEndpoint(url: "unix://app:pw@/tmp/r.sock")
        #expect(withUser.address == .unix(path: "/tmp/r.sock") && withUser.username == "app" && withUser.password == "pw")
    }

    @Test("rediss:// says why it is refused: no TLS in this hiredis, use a tunnel")
    func tls() {
        #expect(throws: RedisEndpointError.tlsUnavailable(url: "rediss://u:***@managed.example.com:6380")) {
            try RedisEndpoint(url: "rediss://u:p4ss@managed.example.com:6380")
        }
        let text = RedisEndpointError.tlsUnavailable(url: "rediss://x").description
        #expect(text.contains("no TLS") && text.contains("tunnel"), "\(text)")
    }

    @Test("what is not a Redis URL is a typed error that names what is wrong",
          arguments: ["http://example.com", "redis://", "redis://host:0", "redis://host:99999", "redis://host:port",
                      "redis://host/db", "redis://host/-1", "redis://::1:6379", "redis://[::1", "unix://relative.sock",
                      "unix:///s.sock?db=x", "redis://u:%zz@host", "nothing", "redis://host?timeout=0",
                      "redis://host?socket_timeout=x", "redis://host?socket_connect_timeout=-1", "redis://host?retry=1",
                      "redis://host?timeout"])
    func invalid(_ url: String) {
        #expect(throws: RedisEndpointError.self, "\(url)") { try RedisEndpoint(url: url) }
    }

    /// A server's configuration often holds only its REDIS_URL: the timeouts come in its query,
    /// by redis-py's names, in seconds (issue: `?timeout=1` was refused).
    @Test("timeouts from the query: socket_timeout (or timeout) and socket_connect_timeout, kept in the URL a child is given")
    func timeoutsFromTheQuery() throws {
        let endpoint = try RedisEndpoint(url: "redis://u:secret@cache.internal:6380/2?socket_timeout=0.5&socket_connect_timeout=3")
        #expect(endpoint.commandTimeout == .milliseconds(500))
        #expect(endpoint.connectTimeout == .seconds(3))
        #expect(endpoint.database == 2)
        #expect(endpoint.description == "redis://u:***@cache.internal:6380/2?socket_connect_timeout=3&socket_timeout=0.5")
        let again = try RedisEndpoint(url: endpoint.secretURL)
        #expect(again.commandTimeout == .milliseconds(500) && again.connectTimeout == .seconds(3) && again.password == "secret")
        #expect(try RedisEndpoint(url: "redis://host?timeout=1").commandTimeout == .seconds(1))
        let socket = try RedisEndpoint(url: "unix:///run/redis.sock?db=3&timeout=2")
        #expect(socket.database == 3 && socket.commandTimeout == .seconds(2))
        #expect(socket.description == "unix:///run/redis.sock?db=3&socket_timeout=2")
        let plain = try RedisEndpoint(url: "redis://host")
        #expect(plain.connectTimeout == RedisEndpoint.defaultConnectTimeout && plain.commandTimeout == RedisEndpoint.defaultCommandTimeout)
        #expect(plain.description == "redis://host:6379", "defaults are not written out")
    }

    /// The password in every place an endpoint or its errors are shown.
    @Test("a password is found in no description, dump, debug text or error")
    func secretsStaySecret() throws {
        let secret = "Pa55-word-never-shown"
        let endpoint = try RedisEndpoint(url: "redis://countdown:\(secret)@127.0.0.1:6379/1")
        var dumped = ""
        dump(endpoint, to: &dumped)
        let shown = [endpoint.description, endpoint.debugDescription, "\(endpoint)", String(reflecting: endpoint), dumped,
                     "\([endpoint])", "\(Optional(endpoint) as Any)"]
        for text in shown {
            #expect(!text.contains(secret), "\(text)")
        }
        #expect(endpoint.description == "redis://countdown:***@127.0.0.1:6379/1")
        for bad in ["redis://countdown:\(secret)@host:notaport", "http://countdown:\(secret)@host", "redis://countdown:\(secret)@host/x",
                    "rediss://countdown:\(secret)@host", "countdown:\(secret)@host"] {
            do {
                _ = try RedisEndpoint.parse(bad)
                Issue.record("\(bad) was taken")
            } catch {
                #expect(!"\(error)".contains(secret), "\(error)")
                #expect(!String(reflecting: error).contains(secret), "\(String(reflecting: error))")
            }
        }
    }

    @Test("HOST:PORT, as --redis took it before URLs, still parses; nothing else does")
    func hostAndPort() throws {
        #expect(try RedisEndpoint.parse("127.0.0.1:6379").address == .tcp(host: "127.0.0.1", port: 6379))
        #expect(RedisEndpoint("127.0.0.1") == nil)
        #expect(RedisEndpoint("u:p@127.0.0.1:6379") == nil)
    }
}
