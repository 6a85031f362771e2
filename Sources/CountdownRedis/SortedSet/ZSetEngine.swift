#if Redis
import Countdown
import CountdownSupport
import Dispatch
import Foundation
import Synchronization

/// The sorted-set strategy's engine: the scripts' answers turned into what this member's
/// observers hear. Three connections: the callers' (one call at a time), the claimer's and the
/// inbox reader's (each a thread's own), so that a blocking pop or a claim never waits behind a
/// caller, and no caller behind them.
final class ZSetEngine: ScriptedFleetEngine {
    let settings: SchedulerSettings
    let watch: LocalWatch
    /// This member's name in the fleet: random, new for every scheduler.
    let member: String
    /// `{namespace}`: the hash tag keeps every key of the namespace on one cluster slot.
    private let prefix: String
    private let calls: RedisLink
    private let claimer: ZSetClaimer
    private let inbox: InboxReader
    private let clock: ServerClock
    private let observerSerial = Atomic<Int64>(0)
    let unavailableCalls = Atomic<Int>(0)
    let scripts = FleetScripts(cancel: ZSetScripts.cancel, pause: ZSetScripts.pause, resume: ZSetScripts.resume, remaining: ZSetScripts.remaining)

    init(
        endpoint: RedisEndpoint, namespace: String, settings: SchedulerSettings, tolerance: Duration, defects: FleetDefects = []
    ) throws(CountdownError) {
        self.settings = settings
        prefix = "{\(namespace)}"
        let member = newMemberName()
        self.member = member
        let watch = LocalWatch(tick: settings.tickInterval, queue: settings.deliveryQueue, defects: defects)
        self.watch = watch
        let claims: RedisLink, inboxLink: RedisLink
        do {
            calls = try RedisLink(endpoint, client: "\(member):calls", defects: defects)
            // One claim at a time: a small ring (a claim's answer can hold a thousand countdowns).
            claims = try RedisLink(
                endpoint, client: "\(member):claimer", patience: .untilStopped { watch.isStopped }, ring: 8, defects: defects)
            // Its reads block for a second (`BLMOVE … 1`): they wait longer than that for an answer.
            inboxLink = try RedisLink(
                endpoint, client: "\(member):inbox", commandTimeout: .custom(max(endpoint.commandTimeout, .seconds(3))), patience: .within(.zero))
        } catch {
            throw error.countdownError
        }
        let clock = ServerClock()
        self.clock = clock
        let claimer = ZSetClaimer(
            link: claims, prefix: prefix, tolerance: tolerance, heartbeat: defects.contains(.claimsOnlyItsOwn) ? nil : .seconds(1),
            clock: clock
        ) { generation, token in
            watch.receive(FleetNotice(generation: generation, token: token, kind: .finished))
        }
        self.claimer = claimer
        inbox = InboxReader(
            link: inboxLink, box: "\(prefix):i:\(member)", processing: "\(prefix):w:\(member)",
            handle: { messages in
                for message in messages { Self.handle(message, watch: watch, claimer: claimer, clock: clock, defects: defects) }
            },
            stopped: { watch.isStopped }, defects: defects)
        watch.startTicks(name: "cd-redis-ticks")
        claimer.start(name: "cd-redis-claim")
        inbox.start(name: "cd-redis-inbox")
    }

    // MARK: Calls

    func start(key: String, duration: Duration, observer: FleetObserver) throws(CountdownError) -> CountdownStart {
        try settings.validate(key: key, duration: duration)
        let token = try expect()
        let reply: RedisReply
        do {
            reply = try calls.run(ZSetScripts.start, keys: [prefix], arguments: startArguments(key, duration, token, attachOnly: false))
        } catch {
            watch.abandon(token)
            throw error.countdownError
        }
        return try started(reply, key: key, token: token, duration: duration, observer: observer)
    }

    func startMany(_ batch: [(String, Duration, FleetObserver)]) -> [Result<CountdownStart, CountdownError>] {
        var results = [Result<CountdownStart, CountdownError>?](repeating: nil, count: batch.count)
        var sent: [(index: Int, token: String)] = []
        var arguments: [[String]] = []
        for (index, (key, duration, _)) in batch.enumerated() {
            do throws(CountdownError) {
                try settings.validate(key: key, duration: duration)
                let token = try expect()
                sent.append((index, token))
                arguments.append(startArguments(key, duration, token, attachOnly: false))
            } catch {
                results[index] = .failure(error)
            }
        }
        do {
            let replies = try calls.runMany(ZSetScripts.start, keys: [prefix], arguments: arguments)
            for ((index, token), reply) in zip(sent, replies) {
                if case .error(let text) = reply {
                    watch.abandon(token)
                    results[index] = .failure(RedisFailure.server(text).countdownError)
                    continue
                }
                results[index] = Result { () throws(CountdownError) in
                    try started(reply, key: batch[index].0, token: token, duration: batch[index].1, observer: batch[index].2)
                }
            }
        } catch {
            for (index, token) in sent {
                watch.abandon(token)
                results[index] = .failure(error.countdownError)
            }
        }
        return results.map { $0! }
    }

    func attach(key: String, observer: FleetObserver) throws(CountdownError) -> Duration? {
        guard !key.isEmpty else { return nil }
        guard !watch.isStopped else { return nil }
        let token = try expect()
        let reply: RedisReply
        do {
            reply = try calls.run(ZSetScripts.start, keys: [prefix], arguments: startArguments(key, .nanoseconds(1), token, attachOnly: true))
        } catch {
            watch.abandon(token)
            throw error.countdownError
        }
        guard case .attached(let remaining) = try started(reply, key: key, token: token, duration: .zero, observer: observer)
        else { return nil }
        return remaining
    }

    func activeKeys() throws(CountdownError) -> [String] {
        guard !watch.isStopped else { return [] }
        let replies = try pipeline([["ZRANGE", "\(prefix):d", "0", "-1"], ["SMEMBERS", "\(prefix):p"]])
        return replies.flatMap { $0.elements.compactMap(\.text) }
    }

    func activeCount() throws(CountdownError) -> Int {
        guard !watch.isStopped else { return 0 }
        let replies = try pipeline([["ZCARD", "\(prefix):d"], ["SCARD", "\(prefix):p"]])
        return replies.reduce(0) { $0 + Int($1.int ?? 0) }
    }

    func shutdown() {
        guard !watch.isStopped else { return }
        watch.shutdown()
        claimer.stop()
        // Wakes the inbox reader's blocking move, so that its thread ends now rather than at the
        // move's timeout.
        _ = try? calls.call(["RPUSH", "\(prefix):i:\(member)", "q"])
    }

    // MARK: Answers

    /// A new observer's token, `member/serial`, expected by the watch before its call is sent.
    private func expect() throws(CountdownError) -> String {
        let token = "\(member)/\(observerSerial.add(1, ordering: .relaxed).newValue)"
        guard watch.expect(token) else { throw .shutDown }
        return token
    }

    private func startArguments(_ key: String, _ duration: Duration, _ token: String, attachOnly: Bool) -> [String] {
        // Whole microseconds, rounded up: the server's clock counts them, and a countdown must
        // never end early.
        let micros = (duration.nanoseconds + 999) / 1000
        return [token, canonicalKey(key), String(micros), String(settings.capacity ?? -1), attachOnly ? "1" : "0"]
    }

    /// A start's or attach's answer: what this member now observes, and what the caller hears.
    private func started(
        _ reply: RedisReply, key: String, token: String, duration requested: Duration, observer: FleetObserver
    ) throws(CountdownError) -> CountdownStart {
        let received = LocalWatch.now()
        let answer: StartAnswer
        do {
            answer = try StartAnswer(reply)
        } catch {
            watch.abandon(token)
            throw error
        }
        switch answer.outcome {
        case .overCapacity:
            watch.abandon(token)
            throw .capacityExceeded(capacity: settings.capacity ?? 0)
        case .nothingToAttach:
            watch.abandon(token)
            return .started  // read by attach as "nothing attached": only an attach asks for nothing
        case .started, .attached: break
        }
        clock.update(serverNow: answer.now, receivedAt: received)
        let observation = answer.observation(
            key: canonicalKey(key), token: token, requested: requested, observer: observer, receivedAt: received)
        guard watch.observe(observation) else { throw .shutDown }
        if answer.outcome == .started, let deadline = answer.localDeadline(receivedAt: received) { claimer.claim(at: deadline) }
        return answer.answer
    }

    // MARK: The inbox

    /// What another member did to a countdown observed here, or a wake-up.
    private static func handle(
        _ message: FleetMessage, watch: LocalWatch, claimer: ZSetClaimer, clock: ServerClock, defects: FleetDefects
    ) {
        if case .wake(let deadline) = message, !defects.contains(.claimsOnlyItsOwn) { claimer.claim(at: clock.local(deadline)) }
        guard let notice = FleetNotice(message, clock: clock) else { return }
        if defects.contains(.ignoresOtherMembers), notice.kind != .finished { return }
        watch.receive(notice)
    }

    // MARK: Calls to Redis

    func resumed(dueAt deadline: Int64) { claimer.claim(at: deadline) }

    func run(_ script: RedisScript, _ arguments: [String]) throws(CountdownError) -> RedisReply {
        do {
            return try calls.run(script, keys: [prefix], arguments: arguments)
        } catch {
            throw error.countdownError
        }
    }

    /// Commands that read (one round trip): their replies, or the first error.
    private func pipeline(_ commands: [[String]]) throws(CountdownError) -> [RedisReply] {
        let replies: [RedisReply]
        do {
            replies = try calls.pipeline(commands)
        } catch {
            throw error.countdownError
        }
        for case .error(let text) in replies { throw RedisFailure.server(text).countdownError }
        return replies
    }
}
#endif
