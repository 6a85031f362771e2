#if Redis
import Countdown
import CountdownRedis
import CountdownSupport
import Dispatch
import Foundation

/// Part 5 of `countdown-bench fleet`: `redis(zset)` called as a server calls it. C tasks on
/// Swift's cooperative pool (one thread a core), each a run of requests that open a window
/// (`start`) and close it (`cancel`), beside a heartbeat task on the same pool that sleeps 5 ms
/// at a time: calls a second, each request's time, and how late the heartbeat woke, through the
/// async calls (`scheduler.async`) and through the blocking ones called from the same tasks.
enum FleetServers {
    enum API: String, CaseIterable, Sendable { case async, blocking }

    static func measure(
        concurrency: [Int], requests: Int, server: RedisUnderTest, progress: (String) -> Void
    ) throws -> [FleetDocument.ServerRow] {
        var rows: [FleetDocument.ServerRow] = []
        for api in API.allCases {
            for tasks in concurrency {
                progress("servers: \(requests) requests, \(tasks) at once, \(api.rawValue) calls")
                let scheduler = try RedisCountdownScheduler(
                    endpoint: server.endpoint, namespace: RedisTarget.namespace("fleet-servers-\(UInt32.random(in: 0...UInt32.max))"),
                    tickInterval: .seconds(1), maximumDuration: .seconds(3600))
                defer { scheduler.shutdown() }
                rows.append(try waitFor { try await run(api, tasks: tasks, requests: requests, scheduler) })
            }
        }
        return rows
    }

    /// `body` on the cooperative pool, this thread (not the pool's) waiting for it.
    private static func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let result = Locked<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }

    private static func run(_ api: API, tasks: Int, requests: Int, _ scheduler: RedisCountdownScheduler) async throws -> FleetDocument.ServerRow {
        let stop = Locked(false)
        let heartbeat = Task { () -> LatencyHistogram in
            var late = LatencyHistogram()
            while !stop.withLock({ $0 }) {
                let before = SystemClocks.monotonic()
                try? await Task.sleep(for: .milliseconds(5))
                late.record((SystemClocks.monotonic() - before) &- 5_000_000)
            }
            return late
        }
        let began = SystemClocks.monotonic()
        let times = try await withThrowingTaskGroup(of: LatencyHistogram.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var times = LatencyHistogram()
                    for request in stride(from: task, to: requests, by: tasks) {
                        let key = KeyShape.real.key(request)
                        let before = SystemClocks.monotonic()
                        switch api {
                        case .async:
                            _ = try await scheduler.async.start(key: key, duration: .seconds(600)) { _ in }
                            _ = try await scheduler.async.cancel(key: key)
                        case .blocking:
                            _ = try scheduler.start(key: key, duration: .seconds(600)) { _ in }
                            _ = try scheduler.throwing.cancel(key: key)
                        }
                        times.record(SystemClocks.monotonic() - before)
                    }
                    return times
                }
            }
            var all = LatencyHistogram()
            for try await times in group { all.merge(times) }
            return all
        }
        let elapsed = Double(SystemClocks.monotonic() - began) / 1e9
        stop.withLock { $0 = true }
        let late = await heartbeat.value
        func ms(_ histogram: LatencyHistogram, _ percent: Double) -> Double? { histogram.percentile(percent).map(\.milliseconds) }
        return FleetDocument.ServerRow(
            api: api.rawValue, tasks: tasks, requests: requests, seconds: elapsed, callsPerSecond: Double(2 * requests) / elapsed,
            requestP50Ms: ms(times, 50), requestP99Ms: ms(times, 99), heartbeats: late.count,
            heartbeatP99Ms: ms(late, 99), heartbeatMaxMs: ms(late, 100))
    }
}
#endif
