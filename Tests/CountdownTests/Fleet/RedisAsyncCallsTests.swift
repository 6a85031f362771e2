#if Redis
import Countdown
@testable import CountdownRedis
import CountdownConformance
import CountdownSupport
import Foundation
import Testing

/// `scheduler.async`: the calls a server's request handlers make, as tasks on the cooperative
/// pool. Judged by what happened in what order, not by how long it took.
@Suite("redis: async calls", .timeLimit(.minutes(2)))
struct RedisAsyncCallsTests {
    @Test("calls waiting on a server that answers nothing block no thread of the pool: a task beside them runs first")
    func poolStaysFree() async throws {
        let server = try LocalRedisServer()
        defer { server.remove() }
        let scheduler = try RedisCountdownScheduler(endpoint: server.endpoint, namespace: "async-pool")
        defer { scheduler.shutdown() }
        let history = Locked<[String]>([])
        _ = try RedisConnection(server.endpoint).call(["CLIENT", "PAUSE", "2000", "ALL"])
        try await withThrowingTaskGroup(of: Void.self) { group in
            // More callers than the pool has threads (one a core): blocking, they would hold them all.
            for index in 0..<64 {
                group.addTask {
                    _ = try await scheduler.async.remaining(key: "rate-limit:user:\(100_000 + index)")
                    history.withLock { $0.append("call") }
                }
            }
            group.addTask {
                try await Task.sleep(for: .milliseconds(20))
                history.withLock { $0.append("beside") }
            }
            try await group.waitForAll()
        }
        let seen = history.withLock { $0 }
        #expect(seen.count == 65)
        #expect(seen.first == "beside", "a call returned before the task beside them ran: \(seen.prefix(3))")
    }

    @Test("a task cancelled while its call is on its way gets the call's answer, and the fleet holds it")
    func cancelledTaskGetsItsAnswer() async throws {
        let server = try LocalRedisServer()
        defer { server.remove() }
        let scheduler = try RedisCountdownScheduler(endpoint: server.endpoint, namespace: "async-cancel")
        defer { scheduler.shutdown() }
        // The server answers nothing until the task has been cancelled.
        _ = try RedisConnection(server.endpoint).call(["CLIENT", "PAUSE", "300", "ALL"])
        let start = Task { try await scheduler.async.start(key: "sms-code:+8613812345678", duration: .seconds(60)) { _ in } }
        let cancel = Task { try await scheduler.async.cancel(key: "rate-limit:user:0000000042") }
        start.cancel()
        cancel.cancel()
        #expect(try await start.value == .started)
        #expect(try await cancel.value == false)
        let left = try await scheduler.async.remaining(key: "sms-code:+8613812345678")
        #expect(left.map { $0 > .seconds(50) } == true, "the fleet holds the start: \(String(describing: left))")
        #expect(try await scheduler.async.activeKeys() == ["sms-code:+8613812345678"])
    }

    @Test("256 requests at once, each a window opened and closed: every answer is its own; the fleet ends empty")
    func manyRequestsAtOnce() async throws {
        let server = try TestRedis.server()
        let scheduler = try RedisCountdownScheduler(endpoint: server.endpoint, namespace: TestRedis.namespace(), tickInterval: .milliseconds(50))
        defer { scheduler.shutdown() }
        let wrong = try await withThrowingTaskGroup(of: String?.self) { group in
            for user in 0..<256 {
                group.addTask {
                    let key = "rate-limit:user:\(100_000_000 + user)"
                    let first = try await scheduler.async.start(key: key, duration: .seconds(30)) { _ in }
                    let again = try await scheduler.async.start(key: key, duration: .seconds(30)) { _ in }
                    guard first == .started, case .attached = again else { return "\(key): \(first), then \(again)" }
                    let cancelled = try await scheduler.async.cancel(key: key)
                    let after = try await scheduler.async.remaining(key: key)
                    return cancelled && after == nil ? nil : "\(key): cancel \(cancelled), then remaining \(String(describing: after))"
                }
            }
            return try await group.compactMap { $0 }.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong, first: \(wrong.prefix(3))")
        #expect(try await scheduler.async.activeCount() == 0)
        let batch = await scheduler.async.start((0..<300).map { (key: "otp:\($0)", duration: Duration.seconds(30), observer: { _ in }) })
        #expect(batch.allSatisfy { (try? $0.get()) == .started })
        #expect(try await scheduler.async.activeCount() == 300)
        #expect(try await Set(scheduler.async.activeKeys()) == Set((0..<300).map { "otp:\($0)" }))
    }

    @Test("starts and cancels that wait together go as one script: one key started once, the rest attached; answers dropped on the way are answered again as the first time")
    func mergedCallsAnsweredAsTheFirstTime() async throws {
        let server = try LocalRedisServer()
        defer { server.remove() }
        let proxy = try FaultProxy(upstream: try #require(server.endpoint.hostAndPort))
        defer { proxy.stop() }
        let scheduler = try RedisCountdownScheduler(endpoint: RedisEndpoint(host: "127.0.0.1", port: proxy.port), namespace: "async-merged")
        defer { scheduler.shutdown() }
        let scripts = { () throws -> Int in
            let stats = try RedisConnection(server.endpoint).call(["INFO", "commandstats"]).text ?? ""
            return stats.split(whereSeparator: \.isNewline).first { $0.hasPrefix("cmdstat_evalsha:") }
                .flatMap { $0.split(separator: "=")[1].split(separator: ",").first.flatMap { Int($0) } } ?? 0
        }
        // One key from 64 tasks at once: started once, attached 63 times.
        let oneKey = await withTaskGroup(of: CountdownStart?.self) { group in
            for _ in 0..<64 { group.addTask { try? await scheduler.async.start(key: "sms-code:+8613812345678", duration: .seconds(60)) { _ in } } }
            return await group.reduce(into: [CountdownStart?]()) { $0.append($1) }
        }
        #expect(oneKey.filter { $0 == .started }.count == 1)
        #expect(oneKey.filter { if case .attached = $0 { true } else { false } }.count == 63)
        // Answers lost after the server ran the call (about every other answer to a request
        // naming these keys, at random): each merged call sent again answers from its record, so
        // no start answers .attached and no cancel false. Only such answers are dropped, and
        // counted: the member's other connections (claimer, inbox) go through the proxy too, and
        // a drop there once ended the rounds before the first (CI-like load, 2 runs of 40).
        proxy.inject(.dropAnswers(every: 2, toRequestsContaining: "rate-limit:user:"))
        let before = try scripts()
        var rounds = 0
        repeat {
            let keys = (0..<256).map { "rate-limit:user:\(rounds)-\(100_000_000 + $0)" }
            rounds += 1
            let started = await withTaskGroup(of: CountdownStart?.self) { group in
                for key in keys { group.addTask { try? await scheduler.async.start(key: key, duration: .seconds(60)) { _ in } } }
                return await group.reduce(into: [CountdownStart?]()) { $0.append($1) }
            }
            // Which it was matters: nil is a start that threw, .attached a record answering wrongly.
            #expect(started.allSatisfy { $0 == .started },
                    "\(started.filter { $0 != .started }.count) of 256 not .started: \(started.filter { $0 == nil }.count) threw, \(started.filter { if case .attached = $0 { true } else { false } }.count) attached")
            let cancelled = await withTaskGroup(of: Bool?.self) { group in
                for key in keys { group.addTask { try? await scheduler.async.cancel(key: key) } }
                return await group.reduce(into: [Bool?]()) { $0.append($1) }
            }
            #expect(cancelled.allSatisfy { $0 == true },
                    "\(cancelled.filter { $0 != true }.count) of 256 cancels not true: \(cancelled.filter { $0 == nil }.count) threw, \(cancelled.filter { $0 == false }.count) false")
        } while proxy.faults == 0 && rounds < 10
        #expect(proxy.faults > 0, "no answer was lost in \(rounds) rounds")
        let sent = try scripts() - before
        #expect(sent < rounds * 256, "\(sent) scripts for \(rounds * 512) calls: too few went together")
        proxy.inject(nil)
        #expect(try await scheduler.async.activeKeys() == ["sms-code:+8613812345678"])
    }
}
#endif
