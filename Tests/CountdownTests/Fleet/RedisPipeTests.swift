#if Redis
import Countdown
@testable import CountdownRedis
import CountdownSupport
import Foundation
import Testing

/// The callers' pipelined connection: many callers at once on one connection, a bound on what
/// is in flight, answers in order. Each test has a `redis-server` of its own, which it pauses
/// (`CLIENT PAUSE`) so that requests pile up while the server answers nothing.
@Suite("Redis pipe", .timeLimit(.minutes(2)))
struct RedisPipeTests {
    /// Polls `condition` every 10 ms until it holds or 10 s passed: whether it held.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    @Test("callers past the bound wait, suspended, rather than queue; once the server answers, every one is answered, on one connection")
    func boundedInFlight() async throws {
        let server = try LocalRedisServer()
        defer { server.remove() }
        let admin = try RedisConnection(server.endpoint)
        let pipe = try RedisPipe(server.endpoint, client: "test:calls", name: "cd-test-pipe", ring: 64)
        defer { pipe.stop() }
        #expect(pipe.bound == 16)
        let connections = try #require(try Self.connectionsReceived(admin))
        _ = try admin.call(["CLIENT", "PAUSE", "1500", "ALL"])
        let admitted = Locked(0)
        let answers = await withTaskGroup(of: String?.self) { group in
            for index in 0..<100 {
                group.addTask {
                    let ticket = await pipe.submit([.command(["ECHO", "caller-\(index)"])])
                    admitted.withLock { $0 += 1 }
                    return try? await ticket.value[0].get().text
                }
            }
            // While the server answers nothing: the bound is reached, never passed; the rest wait.
            let full = await Self.eventually { pipe.inFlight == pipe.bound && pipe.waitingCallers == 100 - pipe.bound }
            #expect(full, "in flight \(pipe.inFlight), waiting \(pipe.waitingCallers)")
            #expect(admitted.withLock { $0 } <= pipe.bound)
            var answers: [String?] = []
            for await answer in group { answers.append(answer) }
            return answers
        }
        #expect(Set(answers.compactMap { $0 }) == Set((0..<100).map { "caller-\($0)" }), "every caller answered its own")
        #expect(pipe.inFlight == 0 && pipe.waitingCallers == 0)
        #expect(try Self.connectionsReceived(RedisConnection(server.endpoint)) == connections + 1, "one connection for the lot (and this one)")
    }

    @Test("answers come back in order: each request of a submission its own, many submissions on the wire at once")
    func answersInOrder() async throws {
        let server = try LocalRedisServer()
        defer { server.remove() }
        let pipe = try RedisPipe(server.endpoint, client: "test:calls", name: "cd-test-pipe")
        defer { pipe.stop() }
        let ok = await withTaskGroup(of: Bool.self) { group in
            for task in 0..<64 {
                group.addTask {
                    let key = "pipe-order-\(task)"
                    let ticket = await pipe.submit((1...20).map { _ in RedisPipe.Request.command(["INCR", key]) })
                    let values = await ticket.value.map { try? $0.get().int }
                    return values == (1...20).map { Int64($0) }
                }
            }
            return await group.allSatisfy { $0 }
        }
        #expect(ok, "some submission's answers were not its own, in order")
    }

    @Test("a thread waits on the same pipe as tasks: the blocking form, beside them")
    func blockingBesideTasks() async throws {
        let server = try LocalRedisServer()
        defer { server.remove() }
        let pipe = try RedisPipe(server.endpoint, client: "test:calls", name: "cd-test-pipe")
        defer { pipe.stop() }
        // A thread of its own, as the blocking form is for: it drives the connection when nobody
        // does, and waits for the pipe's thread when the tasks' calls keep it busy.
        let blocking = Task.detached { (0..<200).map { index in pipe.wait(pipe.submitWaiting([.command(["ECHO", "t\(index)"])]))[0] } }
        let suspended = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<200 { group.addTask { try! await pipe.submit([.command(["ECHO", "a\(index)"])]).value[0].get().text == "a\(index)" } }
            return await group.allSatisfy { $0 }
        }
        let replies = await blocking.value
        #expect(suspended)
        #expect(replies.enumerated().allSatisfy { index, reply in (try? reply.get().text) == "t\(index)" })
    }

    @Test("starts and cancels of different callers queued together, alternating, go as one start script and one cancel script; each is answered its own")
    func mergedAcrossOtherRequests() throws {
        let server = try LocalRedisServer()
        defer { server.remove() }
        let pipe = try RedisPipe(server.endpoint, client: "m:calls", name: "cd-test-pipe", preload: ZSetScripts.callers)
        defer { pipe.stop() }
        _ = pipe.wait(pipe.submitWaiting([.command(["PING"])]))
        let admin = try RedisConnection(server.endpoint)
        _ = try admin.call(["CONFIG", "RESETSTAT"])
        // Queued without waking the pipe's thread, as half as many callers' starts and as many
        // others' cancels would be while a write is on its way; this thread then drives them in
        // one write. No more than may be in flight: past the bound, a submit waits for answers
        // that nobody drives yet.
        let count = pipe.bound
        let tickets = (0..<count).map { index in
            pipe.submitWaiting([index % 2 == 0
                ? .script(ZSetScripts.start, keys: ["{m}"], arguments: ["-1", "1", "0", "0", "m/\(index)", "sms-code:+86138\(10_000_000 + index)", "60000000"],
                          merging: ZSetEngine.startsTogether)
                : .script(ZSetScripts.cancel, keys: ["{m}"], arguments: ["sms-code:+86139\(10_000_000 + index)"], merging: ZSetEngine.cancelsTogether)])
        }
        let answers = tickets.map { pipe.wait($0)[0] }
        let stats = try admin.call(["INFO", "commandstats"]).text ?? ""
        let scripts = stats.split(whereSeparator: \.isNewline).first { $0.hasPrefix("cmdstat_evalsha:") }
            .flatMap { $0.split(separator: "=")[1].split(separator: ",").first.flatMap { Int($0) } } ?? 0
        // One write takes them all unless the pipe's thread, between its sleeps, takes a few
        // first (a write or two more): at most a handful. Merging only neighbours made one a request.
        #expect(count >= 32 && scripts <= 8, "\(scripts) scripts for \(count / 2) starts and \(count / 2) cancels queued together")
        for (index, answer) in answers.enumerated() {
            let fields = (try? answer.get())?.elements.compactMap(\.int) ?? []
            // A start answers {now, 0 (started), generation, deadline}; a cancel of nothing {now, 0}.
            #expect(index % 2 == 0 ? fields.count == 4 && fields[1] == 0 : fields.count == 2 && fields[1] == 0, "request \(index) answered \(answer)")
        }
        #expect(try admin.call(["ZCARD", "{m}:d"]).int == Int64(count / 2))
    }

    static func connectionsReceived(_ connection: RedisConnection) throws -> Int? {
        let info = try connection.call(["INFO", "stats"]).text ?? ""
        return info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("total_connections_received:") }
            .flatMap { Int($0.split(separator: ":")[1]) }
    }
}
#endif
