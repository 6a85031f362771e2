#if Redis
import Countdown
@testable import CountdownConformance
import CountdownSupport
import Foundation
import Testing

@testable import CountdownRedis

#if canImport(Glibc)
import Glibc
#endif

/// A fleet as deployments run it: a `redis-server` that asks for a password, one whose users
/// have the least privilege the article grants (its own `ACL SETUSER` lines, read from it), a
/// database chosen by URL, a Unix socket, a server that never answers, and a password that
/// shows nowhere. Each server is the test's own, stopped by its process id.
@Suite("Redis deployment", .dedicatedThread, .timeLimit(.minutes(5)))
struct RedisDeploymentTests {
    static let password = "pw-\(UInt32.random(in: 0...UInt32.max))-never-shown"
    /// What the suite runs as a restricted user: every call and script the strategies make.
    static let checks: Set = ["start", "finish", "attach", "cancel", "pause-resume", "counts", "events", "fleet.one-key", "fleet.cancel", "fleet.attach"]

    /// The article's `ACL SETUSER countdown …` lines, as the rules they grant.
    static func articleRules() throws -> [String] {
        let article = try String(
            contentsOf: ReadmeSnippetTests.root.appendingPathComponent("Sources/CountdownRedis/CountdownRedis.docc/AFleetOnRedis.md"),
            encoding: .utf8)
        let rules = article.split(separator: "\n").filter { $0.hasPrefix("ACL SETUSER countdown ") }
            .map { String($0.dropFirst("ACL SETUSER countdown ".count)) }
        try #require(rules.count == 2, "the article's two ACL lines")
        return rules
    }

    /// A line of an ACL file: `user NAME` and the rules, the namespace being any that begins
    /// with `prefix` (the suite makes a fresh one for each scheduler).
    /// `NAMESPACE` in the rules stands for every namespace beginning with `prefix`, or for
    /// `namespace` exactly (the patterns then say what they grant, a wildcard no more).
    static func aclUser(_ name: String, _ rules: [String], prefix: String, namespace: String? = nil) -> String {
        let rule = rules.joined(separator: " ").replacingOccurrences(of: "PASSWORD", with: password)
        if let namespace { return "user \(name) " + rule.replacingOccurrences(of: "NAMESPACE", with: namespace) }
        return "user \(name) " + rule.replacingOccurrences(of: "{NAMESPACE}", with: "{\(prefix)*}")
    }

    /// The suite on `strategy`, connecting as `endpoint` says, in namespaces beginning with `prefix`.
    static func suite(_ strategy: RedisStrategy, _ endpoint: RedisEndpoint, prefix: String) -> CountdownConformance {
        CountdownConformance(name: "\(strategy) as a restricted user") { environment in
            try RedisCountdownScheduler(
                endpoint: endpoint, namespace: "\(prefix)-\(environment.namespace)", strategy: strategy,
                tickInterval: environment.tickInterval, deliveryQueue: environment.deliveryQueue)
        }
    }

    static func expectPasses(_ report: ConformanceReport) {
        for result in report.results {
            #expect(result.verdict == .pass, "\(report.backend): \(result.id) was \(result.verdict.rawValue): \(result.messages)")
        }
        #expect(report.results.count == checks.count)
    }

    @Test("both strategies keep the contract as the article's least-privileged users; a command not granted is a typed error naming it")
    func leastPrivilege() throws {
        let rules = try Self.articleRules()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countdown-acl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let acl = directory.appendingPathComponent("users.acl")
        try [
            "user default on >\(Self.password) ~* &* +@all",
            Self.aclUser("zset", [rules[0]], prefix: "zs"),
            // The zset user granted one namespace exactly: its shards' tags must be granted too.
            Self.aclUser("sharded", [rules[0]], prefix: "", namespace: "login-limits"),
            Self.aclUser("keyspace", rules, prefix: "ks"),
            // The zset user without EVALSHA: what a grant that forgot a command gets.
            Self.aclUser("noeval", [rules[0], "-evalsha"], prefix: "ne"),
        ].joined(separator: "\n").appending("\n").write(to: acl, atomically: true, encoding: .utf8)
        let server = try LocalRedisServer(extraSettings: ["--aclfile", acl.path])
        defer { server.remove() }
        let port = try #require(server.endpoint.hostAndPort)

        let zset = try RedisEndpoint(url: "redis://zset:\(Self.password)@\(port)")
        Self.expectPasses(Self.suite(.sortedSet(), zset, prefix: "zs").run(only: Self.checks, concurrency: 2))
        let keyspace = try RedisEndpoint(url: "redis://keyspace:\(Self.password)@\(port)")
        Self.expectPasses(Self.suite(.keyspaceNotifications, keyspace, prefix: "ks").run(only: Self.checks, concurrency: 2))

        let sharded = try RedisCountdownScheduler(
            endpoint: try RedisEndpoint(url: "redis://sharded:\(Self.password)@\(port)"), namespace: "login-limits",
            strategy: .sortedSet(shards: 3), tickInterval: .milliseconds(50))
        let finished = recorder()
        for user in 0..<12 { try sharded.start(key: "rate-limit:user:\(100_000_000 + user)", duration: .milliseconds(100), observer: finished.observer) }
        #expect(finished.wait { $0.filter { $0.event.kind == .finished }.count == 12 }, "three shards as the article's user granted one namespace")
        sharded.shutdown()

        let noeval = try RedisEndpoint(url: "redis://noeval:\(Self.password)@\(port)")
        let error = #expect(throws: CountdownError.self) {
            let scheduler = try RedisCountdownScheduler(endpoint: noeval, namespace: "ne-1")
            defer { scheduler.shutdown() }
            _ = try scheduler.start(key: "k", duration: .seconds(5)) { _ in }
        }
        if case .unavailable(let reason, let text) = error {
            #expect(reason == .authentication)
            #expect(text.lowercased().contains("evalsha"), "names the command: \(text)")
            #expect(!text.contains(Self.password))
        } else {
            Issue.record("not unavailable: \(String(describing: error))")
        }
        // Outside its namespace, the zset user is refused too.
        #expect(throws: CountdownError.self) {
            let scheduler = try RedisCountdownScheduler(endpoint: zset, namespace: "elsewhere")
            defer { scheduler.shutdown() }
            _ = try scheduler.start(key: "k", duration: .seconds(5)) { _ in }
        }
    }

    @Test("a password-protected server: both strategies as its default user, a wrong password a typed error without it")
    func requirePass() throws {
        let server = try LocalRedisServer(extraSettings: ["--requirepass", Self.password])
        defer { server.remove() }
        let port = try #require(server.endpoint.hostAndPort)
        let endpoint = try RedisEndpoint(url: "redis://:\(Self.password)@\(port)")
        let few: Set = ["start", "finish", "cancel"]
        for strategy in [RedisStrategy.sortedSet(), .keyspaceNotifications] {
            let report = CountdownConformance(name: "\(strategy)") { environment in
                try RedisCountdownScheduler(
                    endpoint: endpoint, namespace: environment.namespace, strategy: strategy,
                    tickInterval: environment.tickInterval, deliveryQueue: environment.deliveryQueue)
            }.run(only: few)
            #expect(report.passed, "\(report)")
        }
        for wrong in [try RedisEndpoint(url: "redis://:wrong-\(Self.password)@\(port)"), try RedisEndpoint(url: "redis://\(port)")] {
            let error = #expect(throws: CountdownError.self) { _ = try RedisCountdownScheduler(endpoint: wrong, namespace: "w") }
            if case .unavailable(let reason, let text) = error {
                #expect(reason == .authentication, "\(text)")
                #expect(!text.contains(Self.password), "\(text)")
            } else {
                Issue.record("not unavailable: \(String(describing: error))")
            }
        }
    }

    @Test("the database in the URL is the one used; a Unix socket is reached by its path")
    func databaseAndSocket() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("countdown-sock-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("redis.sock").path
        let server = try LocalRedisServer(extraSettings: ["--unixsocket", socket, "--unixsocketperm", "700"])
        defer { server.remove() }
        let port = try #require(server.endpoint.hostAndPort)
        for url in ["redis://\(port)/3", "unix://\(socket)?db=3"] {
            let endpoint = try RedisEndpoint(url: url)
            let scheduler = try RedisCountdownScheduler(endpoint: endpoint, namespace: "db-\(UInt32.random(in: 0...UInt32.max))", tickInterval: .milliseconds(50))
            let finished = DispatchSemaphore(value: 0)
            _ = try scheduler.start(key: "sms-code:+8613800000000", duration: .milliseconds(200)) { event in
                if event.kind == .finished { finished.signal() }
            }
            let three = try RedisAdmin(try RedisEndpoint(url: "redis://\(port)/3")).keyCount()
            let zero = try RedisAdmin(server.endpoint).keyCount()
            #expect(three > 0 && zero == 0, "\(url): database 3 holds \(three) keys, database 0 \(zero)")
            #expect(finished.wait(timeout: .now() + 10) == .success, "\(url): the countdown was not heard to finish")
            scheduler.shutdown()
            try RedisAdmin(try RedisEndpoint(url: "redis://\(port)/3")).flushAll()
        }
    }

    @Test("a server that accepts and never answers: a typed timeout, never a hang")
    func silentServer() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
        try #require(listen(listener, 16) == 0)
        let port = Int(UInt16(bigEndian: address.sin_port))
        // The kernel completes the connection (the backlog); nothing ever reads or answers.
        let endpoint = RedisEndpoint(.tcp(host: "127.0.0.1", port: port), password: Self.password, commandTimeout: .milliseconds(300))
        let began = SystemClocks.monotonic()
        let error = #expect(throws: CountdownError.self) {
            let scheduler = try RedisCountdownScheduler(endpoint: endpoint, namespace: "silent")
            defer { scheduler.shutdown() }
            _ = try scheduler.start(key: "k", duration: .seconds(5)) { _ in }
        }
        let took = Double(SystemClocks.monotonic() - began) / 1e9
        if case .unavailable(let reason, let text) = error {
            #expect(reason == .timeout, "\(text)")
            #expect(!text.contains(Self.password))
        } else {
            Issue.record("not unavailable: \(String(describing: error))")
        }
        // One-sided: the call's patience (a second) and its last attempt's timeouts, not a hang.
        #expect(took < 30, "took \(took) s")
    }

    /// The benchmark given a URL with a password: its output, its errors and what it wrote never show it.
    @Test("countdown-bench with --redis and REDIS_URL holding a password prints it nowhere")
    func benchmarkKeepsTheSecret() throws {
        let executable = SuspendTests.executable
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "no \(executable.path)")
        let server = try LocalRedisServer(extraSettings: ["--requirepass", Self.password])
        defer { server.remove() }
        let port = try #require(server.endpoint.hostAndPort)
        func bench(_ arguments: [String], environment: [String: String] = [:]) throws -> (Int32, String) {
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
        let url = "redis://:\(Self.password)@\(port)"
        let (status, text) = try bench(["conformance", "--backend", "redis(zset)", "--check", "start,fleet.one-key", "--redis", url, "--no-progress"])
        #expect(status == 0, "\(text)")
        let (fromEnvironment, environmentText) = try bench(
            ["conformance", "--backend", "redis(zset)", "--check", "start", "--format", "json"], environment: ["REDIS_URL": url])
        #expect(fromEnvironment == 0, "\(environmentText)")
        let (wrong, wrongText) = try bench(["conformance", "--backend", "redis(zset)", "--check", "start", "--redis", "redis://:x\(Self.password)@\(port)", "--no-progress"])
        #expect(wrong == 1, "\(wrongText)")
        let (bad, badText) = try bench(["conformance", "--redis", "redis://:\(Self.password)@\(port)/notadb"])
        #expect(bad == 2, "\(badText)")
        for output in [text, environmentText, wrongText, badText] {
            #expect(!output.contains(Self.password), "the password is in the output:\n\(output)")
        }
    }
}
#endif
