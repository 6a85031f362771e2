#if Redis
import Countdown
import CountdownRedis
@testable import CountdownBenchKit
@testable import CountdownConformance
import Dispatch
import Foundation
import Testing

/// What each strategy does when Redis, or a connection to it, goes away: a server of each
/// test's own, so that stopping it disturbs nothing else.
@Suite("Redis faults", .dedicatedThread, .timeLimit(.minutes(3)))
struct RedisFaultTests {
    @Test("an unreachable server is a typed error at init, and nothing is left running", arguments: [RedisStrategy.sortedSet(), .keyspaceNotifications])
    func unreachableAtInit(strategy: RedisStrategy) throws {
        let server = try LocalRedisServer()
        let endpoint = server.endpoint
        server.remove()
        #expect(throws: CountdownError.self) {
            _ = try RedisCountdownScheduler(endpoint: endpoint, strategy: strategy, tickInterval: .milliseconds(50))
        }
        do {
            _ = try RedisCountdownScheduler(endpoint: endpoint, strategy: strategy)
        } catch {
            guard case .unavailable = error else {
                Issue.record("init threw \(error), not unavailable")
                return
            }
        }
    }

    @Test("calls made while Redis is down throw or are counted, never dropped silently; the connection is made again after")
    func downThenBack() throws {
        var server = try LocalRedisServer()
        defer { server.remove() }
        let s = try RedisCountdownScheduler(endpoint: server.endpoint, namespace: TestRedis.namespace(), tickInterval: .milliseconds(50))
        defer { s.shutdown() }
        #expect(try s.start(key: "before", duration: .seconds(30)) { _ in } == .started)
        server.stop()
        #expect(throws: CountdownError.self) { try s.start(key: "while-down", duration: .seconds(30)) { _ in } }
        #expect(throws: CountdownError.self) { _ = try s.throwing.cancel(key: "before") }
        #expect(throws: CountdownError.self) { _ = try s.throwing.remaining(key: "before") }
        let counted = s.unavailableCalls
        #expect(s.cancel(key: "before") == false)
        #expect(s.unavailableCalls == counted + 1, "a cancel answered false while Redis was down was not counted")
        server = try server.restarted()  // same port, no append-only file: an empty server
        #expect(try s.start(key: "after", duration: .seconds(30)) { _ in } == .started, "the connection was not made again")
        #expect(try s.throwing.remaining(key: "after") != nil)
    }

    @Test("redis(zset): every connection dropped (CLIENT KILL) mid-countdown, no finish is lost")
    func sortedSetSurvivesDroppedConnections() throws {
        let server = try LocalRedisServer()
        defer { server.remove() }
        let s = try RedisCountdownScheduler(endpoint: server.endpoint, namespace: TestRedis.namespace(), tickInterval: .milliseconds(50))
        defer { s.shutdown() }
        let recorders = (0..<20).map { _ in recorder() }
        for (index, log) in recorders.enumerated() {
            try s.start(key: "drop-\(index)", duration: .milliseconds(200 + 20 * Int64(index)), observer: log.observer)
        }
        let admin = try RedisAdmin(server.endpoint)
        for _ in 0..<5 {
            try admin.killClients(type: "normal")
            usleep(60_000)
        }
        for (index, log) in recorders.enumerated() {
            #expect(log.waitForFinish(timeout: .seconds(10)), "countdown \(index) never finished")
            #expect(log.finishes.count <= 1)
        }
    }

    @Test("redis(keyspace) loses the finishes whose expiry was published while its subscriber was away; redis(zset) none")
    func subscriberDropped() throws {
        let server = try LocalRedisServer()
        defer { server.remove() }
        func heard(_ strategy: RedisStrategy) throws -> Int {
            let s = try RedisCountdownScheduler(
                endpoint: server.endpoint, namespace: TestRedis.namespace(), strategy: strategy, tickInterval: .milliseconds(100))
            defer { s.shutdown() }
            let recorders = (0..<20).map { _ in recorder() }
            for (index, log) in recorders.enumerated() {
                try s.start(key: "away-\(index)", duration: .milliseconds(300 + 30 * Int64(index)), observer: log.observer)
            }
            // Every 20 ms for 1.5 s, every client's connection but ours is dropped: a subscriber
            // (or an inbox reader) is away most of the time, as one behind a flapping network is.
            let admin = try RedisAdmin(server.endpoint)
            for _ in 0..<75 {
                _ = try? admin.killClients(type: "pubsub")
                _ = try? admin.killClients(type: "normal")
                usleep(20_000)
            }
            // The last was due 0.9 s into the storm; 3 s after the storm, whatever was heard is in.
            let cutoff = ContinuousClock.now + .seconds(3)
            while recorders.contains(where: { $0.finishes.isEmpty }), ContinuousClock.now < cutoff { usleep(20_000) }
            return recorders.filter { !$0.finishes.isEmpty }.count
        }
        let sortedSet = try heard(.sortedSet())
        let keyspace = try heard(.keyspaceNotifications)
        #expect(sortedSet == 20, "redis(zset) heard \(sortedSet) of 20 finishes")
        #expect(keyspace < 20, "redis(keyspace) heard every finish though its subscriber was away for most of their expiries")
    }

    @Test("Redis killed and restarted from its append-only file: the countdowns come back and finish")
    func restartedFromAppendOnlyFile() throws {
        var server = try LocalRedisServer(extraSettings: ["--appendonly", "yes", "--appendfsync", "everysec"])
        defer { server.remove() }
        let s = try RedisCountdownScheduler(endpoint: server.endpoint, namespace: TestRedis.namespace(), tickInterval: .milliseconds(100))
        defer { s.shutdown() }
        let recorders = (0..<10).map { _ in recorder() }
        for (index, log) in recorders.enumerated() {
            try s.start(key: "durable-\(index)", duration: .seconds(3), observer: log.observer)
        }
        Thread.sleep(forTimeInterval: 1.5)  // past one fsync
        server.kill()
        server = try server.restarted()
        #expect(s.activeCount == 10, "the restarted server holds \(s.activeCount) of 10 countdowns")
        for (index, log) in recorders.enumerated() {
            #expect(log.waitForFinish(timeout: .seconds(15)), "countdown \(index) never finished after the restart")
        }
    }

    /// The benchmark's fleet rows start their members as `countdown-bench conformance` again:
    /// a small trial through that path, with one member killed.
    @Test("countdown-bench serves as a fleet member: a trial with a member killed keeps every promise to the living")
    func benchmarkMembers() throws {
        let executable = SuspendTests.executable
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "no \(executable.path)")
        let server = try RedisUnderTest(named: nil)
        let suite = try ConformanceCommand.suite(
            for: .redisZSet(), options: .init(), store: server.endpoint, executable: executable.path)
        let workload = FleetWorkload.races(keys: 30, members: 3, spread: .milliseconds(300), duration: .milliseconds(1500), seed: 7)
            .handingOver(6, from: 1, members: 3)
        var trial = FleetTrial(members: 3, workload: workload, tick: .milliseconds(200), namespace: TestRedis.namespace())
        trial.kill = (member: 1, after: .nanoseconds(workload.lastOffset + 20_000_000))
        let report = try suite.fleetTrial(trial)
        #expect(report.passed, "\(report.summary): \(report.failures)")
        #expect(report.killed == 1)
        #expect(report.finishesOwed > 0 && report.finishesHeard == report.finishesOwed)
    }

    @Test("redis(keyspace) turns expired notifications on again after a restart that forgot them")
    func keyspaceReassertsNotifications() throws {
        // Notifications off in the server's own settings: each restart forgets what the
        // scheduler turned on.
        var server = try LocalRedisServer(extraSettings: ["--notify-keyspace-events", ""])
        defer { server.remove() }
        let s = try RedisCountdownScheduler(
            endpoint: server.endpoint, namespace: TestRedis.namespace(), strategy: .keyspaceNotifications, tickInterval: .milliseconds(100))
        defer { s.shutdown() }
        server.kill()
        server = try server.restarted()
        let log = recorder()
        // The first call after the restart may come before the subscriber is back: the start is
        // sent again within the link's patience, and the subscriber re-asserts the setting.
        try s.start(key: "after-restart:sms-code:+86138", duration: .milliseconds(400), observer: log.observer)
        #expect(log.waitForFinish(timeout: .seconds(10)), "no finish heard after the restart: notify-keyspace-events was not turned on again")
    }

    @Test("typed reasons: a server that is gone is refused; one that wants a password is authentication")
    func typedReasons() throws {
        let gone = try LocalRedisServer()
        let endpoint = gone.endpoint
        gone.remove()
        do {
            _ = try RedisCountdownScheduler(endpoint: endpoint, tickInterval: .milliseconds(50))
            Issue.record("made a scheduler on a server that is gone")
        } catch {
            guard case .unavailable(let reason, _) = error else { throw error }
            #expect(reason == .refused, "\(error)")
        }
        let locked = try LocalRedisServer(extraSettings: ["--requirepass", "s3cret-of-the-test"])
        defer { locked.remove() }
        // Without the password it wants: the scheduler's init says so.
        do {
            _ = try RedisCountdownScheduler(endpoint: locked.endpoint, namespace: TestRedis.namespace(), tickInterval: .milliseconds(50))
            Issue.record("made a scheduler without the password the server wants")
        } catch {
            guard case .unavailable(let reason, _) = error else { throw error }
            #expect(reason == .authentication, "\(error)")
        }
        // With it, until the password is changed and the connections are dropped: every call
        // made again then is refused, each typed, none showing the password.
        var withPassword = locked.endpoint
        withPassword.password = "s3cret-of-the-test"
        let s = try RedisCountdownScheduler(endpoint: withPassword, namespace: TestRedis.namespace(), tickInterval: .milliseconds(50))
        defer { s.shutdown() }
        let admin = try RedisAdmin(withPassword)
        _ = try admin.configSet("requirepass", "s3cret-changed")
        _ = try? admin.killClients(type: "normal")
        do {
            _ = try s.throwing.remaining(key: "rate-limit:user:0000123456")
            Issue.record("a server that wants a password answered")
        } catch {
            guard case .unavailable(let reason, let text) = error else { throw error }
            #expect(reason == .authentication, "\(error)")
            #expect(!text.contains("s3cret"), "the password is in the error: \(text)")
        }
        #expect(throws: CountdownError.self) { _ = try s.throwing.attach(key: "rate-limit:user:0000123456") { _ in } }
        #expect(throws: CountdownError.self) { _ = try s.throwing.events(key: "rate-limit:user:0000123456") }
    }

    /// Many starts in one call go out as scripts, two in flight: when a connection drops answers,
    /// only the scripts whose answers were not yet handed over are sent again, and their records
    /// answer them the same. Every start is answered once, `.started`, and finishes once.
    @Test("redis(zset): 320 starts in one call, through a connection that drops answers: each started once, each finished once")
    func manyStartsThroughDroppedAnswers() throws {
        let server = try LocalRedisServer()
        defer { server.remove() }
        let proxy = try FaultProxy(upstream: try #require(server.endpoint.hostAndPort))
        defer { proxy.stop() }
        let s = try RedisCountdownScheduler(
            endpoint: server.endpoint.at(.tcp(host: "127.0.0.1", port: proxy.port)), namespace: TestRedis.namespace(),
            tickInterval: .seconds(1))
        defer { s.shutdown() }
        proxy.inject(.dropAnswers(every: 2, toRequestsContaining: "rate-limit:user:"))
        let logs = (0..<320).map { _ in recorder() }
        let answers = s.start(logs.enumerated().map { index, log in
            (key: "rate-limit:user:\(100_000_000 + index)", duration: .milliseconds(600), observer: log.observer)
        })
        proxy.inject(nil)
        #expect(proxy.faults > 0, "the proxy dropped no answer: the test tried nothing")
        let started = answers.filter { (try? $0.get()) == .started }.count
        #expect(started == 320, "\(started) of 320 answered .started: \(answers.filter { (try? $0.get()) != .started }.prefix(3))")
        #expect(logs.allSatisfy { $0.waitForFinish() }, "a started countdown was never heard to finish")
        usleep(300_000)  // time for a second finish, were one on its way
        let finishes = logs.map { $0.finishes.count }
        #expect(finishes.allSatisfy { $0 == 1 }, "finishes per countdown: \(Set(finishes)), not one each")
        #expect(logs.allSatisfy { $0.all.first?.event.remaining == .milliseconds(600) }, "a first tick without the full duration")
    }
}
#endif
