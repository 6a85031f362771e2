#if Redis
import Countdown
@testable import CountdownConformance
import Foundation
import Testing

@testable import CountdownRedis

/// Redis does not roll a script back: what a script wrote before an error stays. A script of
/// `redis(zset)` refused in its middle (a permission taken away, the server full) once left a
/// countdown's hash without its deadline in the sorted set: a key blocked for ever, attached
/// with 0 left and never finished. Here each command the scripts write with is taken from the
/// user in turn while countdowns run, every call is made, and the grant is given back: no
/// countdown is half-written, and every key starts, runs and finishes.
@Suite("redis(zset): all or nothing", .dedicatedThread, .timeLimit(.minutes(5)))
struct RedisAllOrNothingTests {
    /// The commands the scripts write with (what Redis flags `write` in `COMMAND INFO`).
    static let writes = ["DEL", "HDEL", "HSET", "INCRBY", "LPOP", "PEXPIRE", "RPUSH", "SADD", "SREM", "ZADD", "ZREM"]

    static let scripts = [ZSetScripts.start, ZSetScripts.cancel, ZSetScripts.pause, ZSetScripts.resume, ZSetScripts.claim, ZSetScripts.moveInbox]

    /// A server of the test's own, its default user with a password, `countdown` as the
    /// article grants both strategies (every namespace beginning `aon`).
    struct Server {
        let server: LocalRedisServer
        let admin: RedisConnection
        let user: RedisEndpoint
        let directory: URL

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("countdown-aon-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let acl = directory.appendingPathComponent("users.acl")
            let rules = try RedisDeploymentTests.articleRules()
            try [
                "user default on >\(RedisDeploymentTests.password) ~* &* +@all",
                RedisDeploymentTests.aclUser("countdown", rules, prefix: "aon"),
            ].joined(separator: "\n").appending("\n").write(to: acl, atomically: true, encoding: .utf8)
            server = try LocalRedisServer(extraSettings: ["--aclfile", acl.path])
            let port = try #require(server.endpoint.hostAndPort)
            admin = try RedisConnection(try RedisEndpoint(url: "redis://:\(RedisDeploymentTests.password)@\(port)"))
            user = try RedisEndpoint(url: "redis://countdown:\(RedisDeploymentTests.password)@\(port)")
        }

        func remove() {
            server.remove()
            try? FileManager.default.removeItem(at: directory)
        }

        func command(_ arguments: [String]) throws -> RedisReply {
            let reply = try admin.call(arguments)
            if case .error(let text) = reply { Issue.record("\(arguments.prefix(3)) answered \(text)") }
            return reply
        }

        /// Every countdown of `namespace` that is half-written: a running one missing from the
        /// sorted set of deadlines (no claim would ever take it), a paused one missing from the
        /// set of paused keys. Read in one script: a claim between two reads of a test's own
        /// would look like a countdown half-written.
        func halfWritten(_ namespace: String) throws -> [String] {
            try command(["EVAL", """
                local p, broken = KEYS[1], {}
                for _, h in ipairs(redis.call('KEYS', p .. ':c:*')) do
                  local key = string.sub(h, #p + 4)
                  if redis.call('HGET', h, 's') == 'p' then
                    if redis.call('SISMEMBER', p .. ':p', key) == 0 then broken[#broken + 1] = key .. ': paused, not in P:p' end
                  elseif not redis.call('ZSCORE', p .. ':d', key) then
                    broken[#broken + 1] = key .. ': running, not in P:d'
                  end
                end
                return broken
                """, "1", "{\(namespace)}"]).elements.compactMap(\.text)
        }
    }

    @Test("the scripts check, before they run anything, every command they write with")
    func everyWriteIsChecked() throws {
        let server = try Server()
        defer { server.remove() }
        for script in Self.scripts {
            let called = Set(script.source.matches(of: /redis\.call\('([A-Z]+)'/).map { String($0.output.1) })
            for command in called.sorted() {
                let flags = try server.command(["COMMAND", "INFO", command]).elements.first?.elements[safe: 2]?.elements.compactMap(\.text) ?? []
                if flags.contains("write") {
                    #expect(script.commands.contains(command), "\(script.name) writes with \(command) and does not check it first")
                    #expect(Self.writes.contains(command), "\(command): add it to the commands taken away below")
                }
            }
        }
    }

    @Test("each write command taken from the user, or the server full, while countdowns run: nothing half-written, every key starts, runs and finishes once it is given back",
          arguments: writes + ["maxmemory"])
    func aPermissionTakenAway(command: String) throws {
        // "maxmemory": the server is full (`maxmemory` 1 byte, `noeviction`): every write refused.
        let full = command == "maxmemory"
        let server = try Server()
        defer { server.remove() }
        let namespace = "aon-\(command.lowercased())"
        let s = try RedisCountdownScheduler(endpoint: server.user, namespace: namespace, tickInterval: .milliseconds(50))
        defer { s.shutdown() }
        let keys = ["sms-code:+8613812345670", "sms-code:+8613812345671", "sms-code:+8613812345672", "rate-limit:user:0000123456"]
        #expect(try s.start(key: keys[0], duration: .seconds(30)) { _ in } == .started)
        #expect(try s.start(key: keys[1], duration: .seconds(30)) { _ in } == .started)
        #expect(s.pause(key: keys[1]))

        _ = try server.command(full ? ["CONFIG", "SET", "maxmemory", "1"] : ["ACL", "SETUSER", "countdown", "-\(command.lowercased())"])
        var refusals: [String] = []
        func refused(_ call: () throws -> Void) {
            do {
                try call()
            } catch {
                guard case .unavailable(let reason, let text) = error as? CountdownError else { Issue.record("\(error)"); return }
                #expect(reason == (full ? .outOfMemory : .authentication), "\(text)")
                #expect(text.contains(full ? "OOM" : command), "the refusal names \(command): \(text)")
                refusals.append(text)
            }
        }
        // A fresh start (one of many in a pipeline, and one alone), an attach, a pause, a
        // resume, a cancel; a countdown that runs out while refused (its claim refused).
        refused { _ = try s.start(key: keys[2], duration: .milliseconds(150)) { _ in } }
        for result in s.start([(keys[3], .milliseconds(150), { _ in }), (keys[0], .seconds(30), { _ in })]) {
            refused { _ = try result.get() }
        }
        refused { _ = try s.throwing.attach(key: keys[0]) { _ in } }
        refused { _ = try s.throwing.pause(key: keys[0]) }
        refused { _ = try s.throwing.resume(key: keys[1]) }
        refused { _ = try s.throwing.cancel(key: keys[1]) }
        // A fresh start writes with these: the two starts were refused.
        if full || ["HSET", "INCRBY", "ZADD"].contains(command) {
            #expect(refusals.count >= 3, "a start runs \(command): the starts were refused, not \(refusals.count) calls")
        }
        Thread.sleep(forTimeInterval: 0.4)
        _ = try server.command(full ? ["CONFIG", "SET", "maxmemory", "0"] : ["ACL", "SETUSER", "countdown", "+\(command.lowercased())"])

        #expect(try server.halfWritten(namespace) == [], "half-written after \(command) was refused (\(refusals.count) calls refused)")
        // Every key starts, runs and finishes: the two of 30 s ended by hand first; the two of
        // 150 ms as they are (a start then attaches to one not yet claimed, which must finish).
        for key in keys[0...1] { _ = try s.throwing.cancel(key: key) }
        for key in keys {
            let log = recorder()
            _ = try s.start(key: key, duration: .milliseconds(200), observer: log.observer)
            #expect(log.waitForFinish(), "\(key) never finished after \(command) was given back")
        }
        #expect(try server.halfWritten(namespace) == [])
    }

    @Test("a countdown half-written by hand (no deadline in the sorted set) is put right by the next start: attached, then finished")
    func aHalfWrittenCountdownIsPutRight() throws {
        let server = try Server()
        defer { server.remove() }
        let namespace = "aon-repair"
        let p = "{\(namespace)}"
        let s = try RedisCountdownScheduler(endpoint: server.user, namespace: namespace, tickInterval: .milliseconds(50))
        defer { s.shutdown() }
        let time = try server.command(["TIME"]).elements.compactMap(\.int)
        let now = time[0] * 1_000_000 + time[1]
        // Past its deadline; 300 ms before it; running with no deadline at all; paused, not in P:p.
        let edits: [(key: String, fields: [String])] = [
            ("sms-code:+8613812345670", ["g", "1", "d", "1000000", "dl", String(now - 5_000_000), "o", "x/1"]),
            ("sms-code:+8613812345671", ["g", "2", "d", "1000000", "dl", String(now + 300_000), "o", "x/2"]),
            ("sms-code:+8613812345672", ["g", "3", "d", "1000000", "o", "x/3"]),
            ("rate-limit:user:0000123456", ["g", "4", "d", "1000000", "s", "p", "r", "400000", "o", "x/4"]),
        ]
        for edit in edits { _ = try server.command(["HSET", "\(p):c:\(edit.key)"] + edit.fields) }
        #expect(try server.halfWritten(namespace).count == 4)
        var logs: [Recorder] = []
        for edit in edits {
            let log = recorder()
            #expect(try s.start(key: edit.key, duration: .seconds(60), observer: log.observer) != .started, "\(edit.key) was there: attached")
            logs.append(log)
        }
        #expect(try server.halfWritten(namespace) == [])
        #expect(s.resume(key: edits[3].key))
        for (edit, log) in zip(edits, logs) { #expect(log.waitForFinish(), "\(edit.key) never finished") }
        for edit in edits { #expect(try s.start(key: edit.key, duration: .seconds(60)) { _ in } == .started) }
    }
}

@Suite("redis: a server that may evict keys", .dedicatedThread, .timeLimit(.minutes(2)))
struct RedisEvictionPolicyTests {
    @Test("a server whose maxmemory-policy evicts keys is refused at init, saying why, unless allowed; noeviction is taken")
    func evictingServerRefused() throws {
        let server = try RedisAllOrNothingTests.Server()
        defer { server.remove() }
        for policy in ["allkeys-lru", "volatile-ttl"] {
            _ = try server.command(["CONFIG", "SET", "maxmemory-policy", policy])
            for strategy in [RedisStrategy.sortedSet(), .keyspaceNotifications] {
                let error = #expect(throws: CountdownError.self) {
                    _ = try RedisCountdownScheduler(endpoint: server.user, namespace: "aon-evict", strategy: strategy)
                }
                if case .invalidConfiguration(let why) = error {
                    #expect(why.contains(policy) && why.contains("noeviction") && why.contains("evictionAllowed"), "\(why)")
                } else {
                    Issue.record("\(strategy) on \(policy): not invalidConfiguration: \(String(describing: error))")
                }
            }
        }
        // Allowed knowingly, it runs.
        let allowed = try RedisCountdownScheduler(endpoint: server.user, namespace: "aon-evict", evictionAllowed: true)
        let log = recorder()
        #expect(try allowed.start(key: "sms-code:+8613812345678", duration: .milliseconds(100), observer: log.observer) == .started)
        #expect(log.waitForFinish())
        allowed.shutdown()
        _ = try server.command(["CONFIG", "SET", "maxmemory-policy", "noeviction"])
        try RedisCountdownScheduler(endpoint: server.user, namespace: "aon-evict").shutdown()
        // The user may not read INFO: a permission, named.
        _ = try server.command(["ACL", "SETUSER", "countdown", "-info"])
        let error = #expect(throws: CountdownError.self) { _ = try RedisCountdownScheduler(endpoint: server.user, namespace: "aon-evict") }
        if case .unavailable(let reason, let text) = error {
            #expect(reason == .authentication && text.contains("INFO"), "\(text)")
        } else {
            Issue.record("without INFO: \(String(describing: error))")
        }
    }
}

extension Array {
    fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
#endif
