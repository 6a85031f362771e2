#if Redis
import Countdown
import CountdownRedis
import CountdownSupport
import Dispatch
import Foundation

/// The measurements of `countdown-bench fleet`, each on a Redis of its own (or the one
/// `--redis` names, in a namespace of its own).
enum FleetExperiments {
    /// `redis(zset)` at scale: `count` countdowns of `duration`, started pipelined in batches
    /// spread over one tick, recorded as `run` records them; then one call at a time, `calls` of
    /// each, beside PINGs.
    static func scale(
        count: Int, duration: Duration, tick: Duration, calls: Int, server: RedisUnderTest, progress: (String) -> Void
    ) throws -> FleetDocument.ScaleRow {
        let delivery = DispatchQueue(label: "fleet.delivery")
        let scheduler = try RedisCountdownScheduler(
            endpoint: server.endpoint, namespace: RedisTarget.namespace("fleet-scale-\(count)"), strategy: .sortedSet(), tickInterval: tick,
            maximumDuration: .seconds(3600), deliveryQueue: delivery)
        let memoryBefore = try server.usedMemory()
        let scriptsBefore = try server.scriptStats()
        let recorder = EventRecorder(count: count, tick: tick, duration: duration)
        let keys = (0..<count).map { KeyShape.real.key($0) }
        // Small batches: a countdown begins when the server runs its script, so a start late in a
        // long pipeline would be counted late by the batch before it.
        let batch = 64
        let batches = (count + batch - 1) / batch
        let cpuBefore = ProcessUsage.now().cpuNanoseconds, redisBefore = server.cpuNanoseconds()
        let first = SystemClocks.monotonic()
        var started = 0
        for b in 0..<batches {
            SystemClocks.sleep(untilMonotonic: first + UInt64(tick.nanoseconds) * UInt64(b) / UInt64(batches))
            let range = (b * batch)..<min(count, (b + 1) * batch)
            let now = SystemClocks.monotonic()
            for index in range { _ = recorder.begin(index, at: now) }
            let answers = scheduler.start(range.map { index in
                (key: keys[index], duration: duration, observer: { [recorder] (event: CountdownEvent) in recorder.record(index, event) })
            })
            for (index, answer) in zip(range, answers) {
                if case .success = answer { started += 1 } else { recorder.abandon(index) }
            }
        }
        let startPhase = SystemClocks.monotonic() - first
        // Memory per countdown from the countdowns alive at the reading: with a long start
        // phase, the first ones have finished by the end of it.
        let memoryDuring = try server.usedMemory()
        let scriptsDuring = try server.scriptStats()
        let alive = scheduler.activeCount
        progress("zset: \(count) started in \(Int(startPhase / 1_000_000)) ms; waiting for their finishes")
        _ = recorder.waitForFinishes(of: started, until: first + UInt64(startPhase) + UInt64((duration + .seconds(30)).nanoseconds))
        let cpu = ProcessUsage.now().cpuNanoseconds - cpuBefore
        let redisCPU = server.cpuNanoseconds().flatMap { after in redisBefore.map { after - $0 } }
        recorder.close()
        delivery.sync {}
        let finished = recorder.finishedCount.load(ordering: .relaxed)
        let events = recorder.ticks + finished
        scheduler.shutdown()

        progress("zset: \(calls) starts, cancels and PINGs one at a time")
        let oneAtATime = try RedisCountdownScheduler(
            endpoint: server.endpoint, namespace: RedisTarget.namespace("fleet-calls-\(count)"), tickInterval: tick, deliveryQueue: delivery)
        defer { oneAtATime.shutdown() }
        var startTimes: [UInt64] = [], cancelTimes: [UInt64] = [], pingTimes: [UInt64] = []
        let ping = try server.connection()
        for index in 0..<calls {
            let key = KeyShape.real.key(index)
            startTimes.append(timed { _ = try? oneAtATime.start(key: key, duration: .seconds(600)) { _ in } })
            pingTimes.append(timed { try? ping.ping() })
        }
        for index in 0..<calls { cancelTimes.append(timed { _ = oneAtATime.cancel(key: KeyShape.real.key(index)) }) }

        func ms(_ p: LatencyHistogram.Percentile?) -> Double? { p.map { Double($0.nanoseconds) / 1e6 } }
        return FleetDocument.ScaleRow(
            countdowns: count, durationMs: Double(duration.nanoseconds) / 1e6, tickMs: Double(tick.nanoseconds) / 1e6,
            started: started, finished: finished, startPhaseMs: Double(startPhase) / 1e6,
            finishP50Ms: ms(recorder.finishError.percentile(50)), finishP99Ms: ms(recorder.finishError.percentile(99)),
            finishMaxMs: ms(recorder.finishError.percentile(100)), tickP99Ms: ms(recorder.tickLateness.percentile(99)),
            events: events,
            cpuPerEventMicros: events > 0 ? Double(cpu) / Double(events) / 1000 : nil,
            redisCPUPerEventMicros: redisCPU.map { events > 0 ? Double($0) / Double(events) / 1000 : 0 },
            redisBytesPerCountdown: alive > 0 ? Double(memoryDuring - memoryBefore) / Double(alive) : nil,
            // Per countdown started, not per script: a script starts up to 64 (the claims of the
            // start phase count too, as before).
            luaMicrosPerStart: scriptsDuring.calls > scriptsBefore.calls && started > 0
                ? Double(scriptsDuring.microseconds - scriptsBefore.microseconds) / Double(started) : nil,
            calls: calls, startMedianMicros: median(startTimes), cancelMedianMicros: median(cancelTimes),
            pingMedianMicros: median(pingTimes))
    }

    /// `countdowns` countdowns due over 1–2 s, for each strategy, beside `idle` keys with a
    /// one-hour TTL written first: how many finishes were heard within `wait` of the last
    /// deadline, and how late.
    static func expiry(
        idle: Int, countdowns: Int, wait: Duration, server: RedisUnderTest, progress: (String) -> Void
    ) throws -> [FleetDocument.ExpiryRow] {
        try server.fill(idleKeys: idle)
        var rows: [FleetDocument.ExpiryRow] = []
        for strategy in [RedisStrategy.keyspaceNotifications, .sortedSet()] {
            progress("expiry: \(strategy.variant) beside \(idle) idle keys")
            let delivery = DispatchQueue(label: "fleet.expiry")
            let scheduler = try RedisCountdownScheduler(
                endpoint: server.endpoint, namespace: RedisTarget.namespace("fleet-expiry-\(strategy.variant)-\(idle)"), strategy: strategy,
                tickInterval: .seconds(1), deliveryQueue: delivery)
            let starts = Locked([UInt64](repeating: 0, count: countdowns))
            let lateness = Locked(LatencyHistogram())
            let heard = Locked(0)
            var random = SystemRandomNumberGenerator()
            var lastDeadline: UInt64 = 0
            for index in 0..<countdowns {
                let duration = Duration.milliseconds(Int64.random(in: 1000...2000, using: &random))
                let now = SystemClocks.monotonic()
                let deadline = now + UInt64(duration.nanoseconds)
                lastDeadline = max(lastDeadline, deadline)
                starts.withLock { $0[index] = deadline }
                _ = try? scheduler.start(key: KeyShape.real.key(index), duration: duration) { event in
                    guard event.kind == .finished else { return }
                    let at = SystemClocks.monotonic()
                    let due = starts.withLock { $0[index] }
                    lateness.withLock { $0.record(at > due ? at - due : 0) }
                    heard.withLock { $0 += 1 }
                }
            }
            let cutoff = lastDeadline + UInt64(wait.nanoseconds)
            while heard.withLock({ $0 }) < countdowns, SystemClocks.monotonic() < cutoff { usleep(20_000) }
            let waited = Double(min(SystemClocks.monotonic(), cutoff) - lastDeadline) / 1e9
            scheduler.shutdown()
            delivery.sync {}
            let histogram = lateness.withLock { $0 }
            func ms(_ percent: Double) -> Double? { histogram.percentile(percent).map { Double($0.nanoseconds) / 1e6 } }
            rows.append(.init(
                strategy: "redis(\(strategy.variant))", idleKeys: idle, countdowns: countdowns, heard: heard.withLock { $0 },
                waitedSeconds: waited, finishP50Ms: ms(50), finishP99Ms: ms(99), finishMaxMs: ms(100)))
        }
        return rows
    }

    private static func timed(_ body: () -> Void) -> UInt64 {
        let begin = SystemClocks.monotonic()
        body()
        return SystemClocks.monotonic() - begin
    }

    private static func median(_ values: [UInt64]) -> Double {
        guard !values.isEmpty else { return 0 }
        return Double(values.sorted()[values.count / 2]) / 1000
    }
}
#endif
