#if Redis
import Countdown
import CountdownSupport
import Dispatch
import Foundation
import Synchronization

/// The sorted-set strategy's engine: the scripts' answers turned into what this member's
/// observers hear. A call goes to its key's shard (``ZSetShards``); each shard has a claimer and
/// an inbox reader of its own, each a thread with its own connection, so that a blocking pop or
/// a claim never waits behind a caller, and no caller behind them. The callers share one
/// pipelined connection per shard (``RedisPipe``), many calls at once; on a Redis Cluster each
/// connection follows its shard's slot to the node that holds it (``ClusterRedirect``).
final class ZSetEngine: ScriptedFleetEngine {
    let settings: SchedulerSettings
    let watch: LocalWatch
    /// This member's name in the fleet: random, new for every scheduler.
    let member: String
    /// The namespace's hash tags: every key of one shard on one cluster slot.
    private let shards: ZSetShards
    /// The callers' connection to each shard.
    private let calls: [RedisPipe]
    private let claimers: [ZSetClaimer]
    private let inboxes: [InboxReader]
    /// What each shard takes of the capacity (nil: no limit).
    private let shardCapacity: Int?
    /// Each start's `WAIT` for replicas (nil: none).
    private let replicas: ReplicaWait?
    private let clock: ServerClock
    private let observerSerial = Atomic<Int64>(0)
    let unavailableCalls = Atomic<Int>(0)
    let background: BackgroundFailures
    let scripts = FleetScripts(cancel: ZSetScripts.cancel, pause: ZSetScripts.pause, resume: ZSetScripts.resume, remaining: ZSetScripts.remaining)

    init(
        endpoint: RedisEndpoint, namespace: String, settings: SchedulerSettings, tolerance: Duration, shards: Int = 1,
        cluster: ClusterMap? = nil, replicas: ReplicaWait? = nil, defects: FleetDefects = []
    ) throws(CountdownError) {
        self.settings = settings
        self.replicas = replicas
        let layout = ZSetShards(namespace: namespace, count: shards)
        self.shards = layout
        // Each shard counts its own countdowns: an even share of the capacity, rounded up.
        shardCapacity = settings.capacity.map { ($0 + layout.count - 1) / layout.count }
        let member = newMemberName()
        self.member = member
        let watch = LocalWatch(tick: settings.tickInterval, queue: settings.deliveryQueue, shardOf: { layout.index(of: $0) }, defects: defects)
        self.watch = watch
        let clock = ServerClock()
        self.clock = clock
        var calls: [RedisPipe] = [], claimers: [ZSetClaimer] = [], inboxes: [InboxReader] = []
        let background = BackgroundFailures()
        self.background = background
        do {
            for prefix in layout.prefixes {
                let route = cluster.map { ClusterRoute(map: $0, slot: ClusterSlot.of(prefix)) }
                calls.append(try RedisPipe(
                    endpoint, client: "\(member):calls", name: layout.count > 1 ? "cd-redis-calls\(calls.count)" : "cd-redis-calls",
                    preload: ZSetScripts.callers, route: route, defects: defects))
                // One claim at a time: a small ring (a claim's answer can hold a thousand countdowns).
                let claims = try RedisLink(
                    endpoint, client: "\(member):claimer", patience: .untilStopped { watch.isStopped }, ring: 8, route: route, defects: defects)
                // Its reads block for a second (`BLMOVE … 1`): they wait longer than that for an answer.
                let inboxLink = try RedisLink(
                    endpoint, client: "\(member):inbox", commandTimeout: .custom(max(endpoint.commandTimeout, .seconds(3))),
                    patience: .within(.zero), route: route)
                let claimer = ZSetClaimer(
                    link: claims, prefix: prefix, tolerance: tolerance,
                    heartbeat: defects.contains(.claimsOnlyItsOwn) ? nil : ZSetClaimer.heartbeat, clock: clock,
                    lostCheck: ZSetLostCheck(prefix: prefix, member: member, watch: watch) { [layout] in layout.prefix(of: $0) == prefix },
                    failed: { background.record($0, in: "the claimer's claim script") }
                ) { generation, token in
                    watch.receive(FleetNotice(generation: generation, token: token, kind: .finished))
                }
                claimers.append(claimer)
                let shard = inboxes.count
                inboxes.append(InboxReader(
                    link: inboxLink, box: "\(prefix):i:\(member)", processing: "\(prefix):w:\(member)",
                    handle: { messages in
                        for message in messages { ZSetInboxMessage.handle(message, watch: watch, claimer: claimer, clock: clock, defects: defects) }
                    },
                    hearing: { watch.inbox($0, shard: shard) },
                    stopped: { watch.isStopped }, failed: { background.record($0, in: "the inbox reader's \($1)") }, defects: defects))
            }
        } catch {
            for pipe in calls { pipe.stop() }
            throw error.countdownError
        }
        self.calls = calls
        self.claimers = claimers
        self.inboxes = inboxes
        watch.startTicks(name: "cd-redis-ticks")
        // Each shard's threads are numbered when there is more than one.
        func name(_ base: String, _ shard: Int) -> String { layout.count > 1 ? "\(base)\(shard)" : base }
        for (shard, claimer) in claimers.enumerated() { claimer.start(name: name("cd-redis-claim", shard)) }
        for (shard, inbox) in inboxes.enumerated() { inbox.start(name: name("cd-redis-inbox", shard)) }
    }

    // MARK: Calls

    func start(key: String, duration: Duration, observer: FleetObserver) -> FleetCall<CountdownStart> {
        do throws(CountdownError) {
            try settings.validate(key: key, duration: duration)
        } catch {
            return .answered(.failure(error))
        }
        return startOne(key, micros: Self.micros(duration), requested: duration, observer: observer, attachOnly: false)
    }

    /// How many starts one script makes at most (``ZSetScripts/start``). What every call pays on
    /// redis-server (the script's call, its clock and record, the wake-up's look) is shared by the
    /// starts of one script: callgrind, instructions per start with its request's parsing, a start
    /// of its own 165 400 (138 700 before every script checked its commands, ``RedisScript``),
    /// one of 64 in a script 41 400 (41 000); an answer of 64 stays small.
    static let startsPerScript = 64

    func startMany(_ batch: [(String, Duration, FleetObserver)]) -> FleetBatch {
        var decided = FleetBatch(count: batch.count)
        // Each shard's starts in scripts of many starts each; a script that fails fails its own starts.
        typealias Start = (index: Int, token: String, routed: Routed, micros: Int64)
        var sent = [[Start]](repeating: [], count: shards.count)
        for (index, (key, duration, _)) in batch.enumerated() {
            do throws(CountdownError) {
                try settings.validate(key: key, duration: duration)
                let routed = route(key)
                sent[routed.shard].append((index, try expect(), routed, Self.micros(duration)))
            } catch {
                decided.refused.append((index, .failure(error)))
            }
        }
        for (shard, starts) in sent.enumerated() {
            for first in stride(from: 0, to: starts.count, by: Self.startsPerScript) {
                let script = Array(starts[first..<min(first + Self.startsPerScript, starts.count)])
                let arguments = fixed(shard, attachOnly: false) + script.flatMap { [$0.token, $0.routed.key, String($0.micros)] }
                let request = RedisPipe.Request.script(ZSetScripts.start, keys: [shards.prefixes[shard]], arguments: arguments)
                let requests = replicas?.requests(after: request) ?? [request]
                let call = FleetCall<FleetBatch.Answers>.send([(calls[shard], requests)], then: { [self] replies throws(CountdownError) in
                    let answers: [StartAnswer]
                    do throws(CountdownError) {
                        answers = try StartAnswer.sequence(replies[0], requested: script.map(\.micros))
                    } catch {
                        for start in script { watch.abandon(start.token) }
                        throw error
                    }
                    return .done(zip(script, answers).map { start, answer in
                        (start.index, Result { () throws(CountdownError) in
                            try started(
                                answer, start.routed, token: start.token, duration: batch[start.index].1, observer: batch[start.index].2, waited: replies)
                        })
                    })
                }, failed: { [watch] _ in for start in script { watch.abandon(start.token) } })
                decided.calls.append((call, script.map(\.index)))
            }
        }
        return decided
    }

    func attach(key: String, observer: FleetObserver) -> FleetCall<Duration?> {
        guard !key.isEmpty, !watch.isStopped else { return .done(nil) }
        return startOne(key, micros: 1, requested: .zero, observer: observer, attachOnly: true).map { start in
            if case .attached(let remaining) = start { remaining } else { nil }
        }
    }

    func activeKeys() -> FleetCall<[String]> {
        guard !watch.isStopped else { return .done([]) }
        let parts = zip(calls, shards.prefixes).map { pipe, prefix in
            (pipe, [RedisPipe.Request.command(["ZRANGE", "\(prefix):d", "0", "-1"]), .command(["SMEMBERS", "\(prefix):p"])])
        }
        return .send(parts, then: { replies in .done(replies.flatMap { $0.elements.compactMap(\.text) }) }, failed: { _ in })
    }

    func activeCount() -> FleetCall<Int> {
        guard !watch.isStopped else { return .done(0) }
        let parts = zip(calls, shards.prefixes).map { pipe, prefix in
            (pipe, [RedisPipe.Request.command(["ZCARD", "\(prefix):d"]), .command(["SCARD", "\(prefix):p"])])
        }
        return .send(parts, then: { replies in .done(replies.reduce(0) { $0 + Int($1.int ?? 0) }) }, failed: { _ in })
    }

    func shutdown() {
        guard !watch.isStopped else { return }
        watch.shutdown()
        for claimer in claimers { claimer.stop() }
        // Wakes the inbox readers' blocking moves, so that their threads end now rather than at
        // the moves' timeout.
        for (pipe, prefix) in zip(calls, shards.prefixes) {
            _ = try? FleetCall<Bool>.send(pipe, [.command(["RPUSH", "\(prefix):i:\(member)", "q"])]) { _ in .done(true) }.wait()
            pipe.stop()
        }
    }

    // MARK: Answers

    /// A new observer's token, `member/serial`, expected by the watch before its call is sent.
    private func expect() throws(CountdownError) -> String {
        let token = "\(member)/\(observerSerial.add(1, ordering: .relaxed).newValue)"
        guard watch.expect(token) else { throw .shutDown }
        return token
    }

    /// A key in its canonical form and its shard, worked out once per call.
    private typealias Routed = (key: String, shard: Int)

    private func route(_ key: String) -> Routed {
        let canonical = canonicalKey(key)
        return (canonical, shards.index(of: canonical))
    }

    /// One start, or an attach (`attachOnly`: `.started` then means nothing was attached).
    private func startOne(
        _ key: String, micros: Int64, requested: Duration, observer: FleetObserver, attachOnly: Bool
    ) -> FleetCall<CountdownStart> {
        let token: String
        do throws(CountdownError) {
            token = try expect()
        } catch {
            return .answered(.failure(error))
        }
        let routed = route(key)
        let arguments = fixed(routed.shard, attachOnly: attachOnly) + [token, routed.key, String(micros)]
        let request = RedisPipe.Request.script(
            ZSetScripts.start, keys: [shards.prefixes[routed.shard]], arguments: arguments, merging: Self.startsTogether)
        let waits = attachOnly ? nil : replicas
        return .send([(calls[routed.shard], waits?.requests(after: request) ?? [request])], then: { [self] replies throws(CountdownError) in
            let answer: StartAnswer
            do throws(CountdownError) {
                answer = try StartAnswer.sequence(replies[0], requested: [micros])[0]
            } catch {
                watch.abandon(token)
                throw error
            }
            return .done(try started(answer, routed, token: token, duration: requested, observer: observer, waited: waits == nil ? nil : replies))
        }, failed: { [watch] _ in watch.abandon(token) })
    }

    /// Starts (or attaches) of one shard waiting together on its pipe go as one script of up to
    /// ``startsPerScript``, as a batch's do: what every call pays on redis-server is paid once.
    static let startsTogether = PipeRequest.Merging(shared: 4, most: startsPerScript) { reply, count in
        StartAnswer.split(reply, count: count)
    }

    /// The start script's arguments before its starts: capacity, shards, this shard, attach only.
    private func fixed(_ shard: Int, attachOnly: Bool) -> [String] {
        [String(shardCapacity ?? -1), String(shards.count), String(shard), attachOnly ? "1" : "0"]
    }

    /// Whole microseconds, rounded up: the server's clock counts them, and a countdown must
    /// never end early.
    private static func micros(_ duration: Duration) -> Int64 { (duration.nanoseconds + 999) / 1000 }

    /// A start's or attach's answer: what this member now observes, and what the caller hears.
    /// `waited`: the replies of a start sent with its `WAIT` (nil: none was sent).
    private func started(
        _ answer: StartAnswer, _ routed: Routed, token: String, duration requested: Duration, observer: FleetObserver,
        waited: [RedisReply]? = nil
    ) throws(CountdownError) -> CountdownStart {
        let received = LocalWatch.now()
        switch answer.outcome {
        case .overCapacity:
            watch.abandon(token)
            throw .capacityExceeded(capacity: settings.capacity ?? 0)
        case .nothingToAttach:
            watch.abandon(token)
            return .started  // read by attach as "nothing attached": only an attach asks for nothing
        case .started, .attached:
            if let waited, let replicas {
                do throws(CountdownError) { try replicas.check(waited) } catch {
                    watch.abandon(token)
                    throw error
                }
            }
        }
        clock.update(serverNow: answer.now, receivedAt: received)
        let observation = answer.observation(
            key: routed.key, token: token, requested: requested, observer: observer, receivedAt: received)
        guard watch.observe(observation) else { throw .shutDown }
        // An attach too: one put right by it may be due now (the script wakes only the others).
        if let deadline = answer.localDeadline(receivedAt: received) {
            claimers[routed.shard].claim(at: deadline)
        }
        return answer.answer
    }

    // MARK: Calls to Redis
    func resumed(key: String, dueAt deadline: Int64) { claimers[shards.index(of: key)].claim(at: deadline) }

    func request(_ script: RedisScript, key: String, _ arguments: [String]) throws(CountdownError) -> FleetCall<Bool>.Part {
        let shard = shards.index(of: key)
        let merging = script.name == ZSetScripts.cancel.name ? Self.cancelsTogether : nil
        return (calls[shard], [.script(script, keys: [shards.prefixes[shard]], arguments: arguments, merging: merging)])
    }

    /// Cancels of one shard waiting together go as one script, as starts do.
    static let cancelsTogether = PipeRequest.Merging(shared: 0, most: startsPerScript) { reply, count in
        PipeRequest.Merging.split(reply, count: count) { $0 == 1 ? 3 : $0 == 0 ? 1 : nil }
    }
}
#endif
