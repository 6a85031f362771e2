#if Redis
import Countdown
@testable import CountdownConformance
import Foundation
import Testing

@testable import CountdownRedis

/// The benchmark on a user's Redis: run as a user granted only its `--namespace`, it leaves the
/// server as it found it, whether it ends or is stopped with Ctrl-C; what others keep there,
/// a running run's under the same namespace included, stays; what a killed run left goes with
/// the next run, once the killed run's lease has run out.
@Suite("countdown-bench on a user's Redis", .dedicatedThread, .timeLimit(.minutes(3)))
struct RedisBenchNamespaceTests {
    /// A server whose `bench` user has the article's lines for `root`, its channels, and `+scan`;
    /// with a key of the user's own, and a key of another run under the same root, which holds
    /// its lease.
    struct UserServer {
        let server: LocalRedisServer
        let admin: RedisConnection
        let url: String
        let directory: URL
        static let kept = ["user:+8613800000000:profile", "{mine:running:x}:c:sms-code", "{mine:running}:lease"]

        init(root: String) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("countdown-bench-ns-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let acl = directory.appendingPathComponent("users.acl")
            let rules = try RedisDeploymentTests.articleRules() + ["&{NAMESPACE:* +scan"]
            try [
                "user default on >\(RedisDeploymentTests.password) ~* &* +@all",
                RedisDeploymentTests.aclUser("bench", rules, prefix: root, namespace: root),
            ].joined(separator: "\n").appending("\n").write(to: acl, atomically: true, encoding: .utf8)
            server = try LocalRedisServer(extraSettings: ["--aclfile", acl.path, "--notify-keyspace-events", "Ex"])
            let port = try #require(server.endpoint.hostAndPort)
            admin = try RedisConnection(try RedisEndpoint(url: "redis://:\(RedisDeploymentTests.password)@\(port)"))
            url = "redis://bench:\(RedisDeploymentTests.password)@\(port)"
            for key in Self.kept.prefix(2) { _ = try admin.call(["SET", key, "the user's"]) }
            _ = try admin.call(["HSET", Self.kept[2], "held", "1"])
            _ = try admin.call(["PEXPIRE", Self.kept[2], "120000"])
        }

        func remove() {
            server.remove()
            try? FileManager.default.removeItem(at: directory)
        }

        var keys: [String] { ((try? admin.call(["KEYS", "*"]))?.elements.compactMap(\.text) ?? []).sorted() }
    }

    static func bench(_ arguments: [String], url: String) throws -> Process {
        let executable = SuspendTests.executable
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "no \(executable.path)")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        // The password through the environment, as the article says.
        process.environment = ProcessInfo.processInfo.environment.merging(["REDIS_URL": url]) { $1 }
        // Both streams in one pipe, read to its end once the test is done with the process.
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        return process
    }

    /// `run` of 200 countdowns of a minute on `server`, once at least 100 of them are there
    /// (judged by what the server holds).
    static func runWithCountdowns(on server: UserServer) throws -> Process {
        let process = try bench(
            ["run", "--backend", "redis(zset)", "--counts", "200", "--duration", "60s", "--repeat", "1", "--starts", "spread",
             "--namespace", "mine", "--allow-debug", "--no-progress"], url: server.url)
        let began = ContinuousClock.now
        while server.keys.count < UserServer.kept.count + 100, ContinuousClock.now - began < .seconds(60), process.isRunning {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(server.keys.count >= UserServer.kept.count + 100, "the run's countdowns never appeared: \(server.keys.prefix(5))")
        return process
    }

    static func output(of process: Process) -> String {
        guard let pipe = process.standardError as? Pipe else { return "" }
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    @Test("conformance, fleet members included, as a user granted only its namespace: nothing left but what was there")
    func conformanceLeavesNothing() throws {
        let server = try UserServer(root: "mine")
        defer { server.remove() }
        // redis(zset) with its fleet members; redis(keyspace), the strategy as tutorials build it,
        // on checks it passes under any load (it loses finishes when answers are dropped).
        for (backend, checks) in [("redis(zset)", "start,cancel,pause-resume,fleet.one-key,fleet.race"), ("redis(keyspace)", "start,cancel,pause-resume")] {
            let process = try Self.bench(["conformance", "--backend", backend, "--check", checks, "--namespace", "mine", "--no-progress"], url: server.url)
            let said = Self.output(of: process)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(backend): \(said)")
            #expect(said.contains("deleted the") && !said.contains(RedisDeploymentTests.password), "\(said)")
            #expect(server.keys == UserServer.kept.sorted(), "\(backend): \(said)")
        }
    }

    @Test("run stopped with SIGINT while its countdowns run: their keys deleted, then it ends as SIGINT would")
    func interruptedRunLeavesNothing() throws {
        let server = try UserServer(root: "mine")
        defer { server.remove() }
        let process = try Self.runWithCountdowns(on: server)
        kill(process.processIdentifier, SIGINT)
        let said = Self.output(of: process)
        process.waitUntilExit()
        #expect(process.terminationStatus == 128 + SIGINT, "\(said)")
        #expect(said.contains("deleted the"), "\(said)")
        #expect(server.keys == UserServer.kept.sorted(), "\(said)")
    }

    @Test("a run on a redis-server of its own, stopped with SIGTERM, stops that server")
    func signalledRunStopsItsOwnServer() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("countdown-pids-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let process = Process()
        process.executableURL = SuspendTests.executable
        process.arguments = ["run", "--backend", "redis(zset)", "--counts", "200", "--duration", "60s", "--repeat", "1", "--allow-debug", "--no-progress"]
        // No REDIS_URL: its own server, whose id it writes into a folder of this test's.
        var environment = ProcessInfo.processInfo.environment
        environment["REDIS_URL"] = nil
        environment[LocalRedisServer.processFolderVariable] = folder.path
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        // SIGTERM as a terminal's user sends it: the child inherits this thread's signal mask,
        // which may block it (libdispatch's threads do; the run then ignored it to the end).
        var term = sigset_t(), previous = sigset_t()
        sigemptyset(&term)
        sigaddset(&term, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &term, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
        let serverID = { (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.first.flatMap { Int32($0) } }
        let running = { (id: Int32) in (try? String(contentsOfFile: "/proc/\(id)/comm", encoding: .utf8))?.hasPrefix("redis-server") == true }
        _ = realTimeWait(timeout: .seconds(30)) { serverID() != nil }
        let id = try #require(serverID(), "the run started no server of its own")
        defer { if running(id) { kill(id, SIGKILL) } }  // ours: its run's child
        Thread.sleep(forTimeInterval: 1)  // its countdowns on their way
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 128 + SIGTERM)
        #expect(realTimeWait(timeout: .seconds(10)) { !running(id) }, "redis-server \(id) still runs after its run ended")
    }

    @Test("a run killed outright leaves its keys and its lease; once the lease has run out, the next run deletes them")
    func killedRunsKeysGoWithTheNext() throws {
        let server = try UserServer(root: "mine")
        defer { server.remove() }
        let process = try Self.runWithCountdowns(on: server)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let left = server.keys.filter { !UserServer.kept.contains($0) }
        let leases = left.filter { $0.hasSuffix("}:lease") }
        #expect(left.count >= 100 && leases.count == 1, "\(left.prefix(5))")
        // What a minute does to it, at once.
        for lease in leases { _ = try server.admin.call(["DEL", lease]) }
        let next = try Self.bench(["conformance", "--backend", "redis(zset)", "--check", "start", "--namespace", "mine", "--no-progress"], url: server.url)
        let said = Self.output(of: next)
        next.waitUntilExit()
        #expect(next.terminationStatus == 0, "\(said)")
        #expect(said.contains("earlier run(s) left"), "\(said)")
        #expect(server.keys == UserServer.kept.sorted(), "\(said)")
    }

    @Test("a namespace's glob characters are matched as themselves")
    func globCharactersEscaped() throws {
        let server = try UserServer(root: "mine")
        defer { server.remove() }
        for key in ["{we*ird}:c:a", "{we*ird:1}:d", "{weXird}:c:a", "{we*irdo}:c:a"] { _ = try server.admin.call(["SET", key, "1"]) }
        let endpoint = try RedisEndpoint(url: "redis://:\(RedisDeploymentTests.password)@\(try #require(server.server.endpoint.hostAndPort))")
        #expect(try NamespaceSweep.delete(["we*ird"], at: endpoint) == 2)
        #expect(server.keys == (UserServer.kept + ["{weXird}:c:a", "{we*irdo}:c:a"]).sorted())
    }
}
#endif
