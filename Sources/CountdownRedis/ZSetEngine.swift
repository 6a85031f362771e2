#if Redis
import Countdown
import CountdownSupport
import Dispatch
import Foundation
import Synchronization

/// The sorted-set strategy's engine: the scripts' answers turned into what this member's
/// observers hear. Three connections: the callers' (one call at a time), the claimer's and the
/// inbox reader's (each a thread's own), so that a blocking pop or a claim never waits behind a
/// caller.
final class ZSetEngine: FleetEngine {
    let settings: SchedulerSettings
    let watch: LocalWatch
    /// This member's name in the fleet: random, new for every scheduler.
    let member: String
    /// `{namespace}`: the hash tag keeps every key of the namespace on one cluster slot.
    private let prefix: String
    private let calls: RedisLink
    private let claims: RedisLink
    private let inbox: RedisLink
    private let observerSerial = Atomic<Int64>(0)
    /// The server's clock minus the monotonic clock, in nanoseconds, as last measured: turns a
    /// deadline told by another member into an instant here.
    private let serverOffset = Atomic<Int64>(0)
    let unavailableCalls = Atomic<Int>(0)
    /// How many countdowns one claim takes at most (a script's `unpack` handles a few thousand).
    static let claimBatch = 1000

    init(endpoint: RedisEndpoint, namespace: String, settings: SchedulerSettings, tolerance: Duration) throws(CountdownError) {
        self.settings = settings
        prefix = "{\(namespace)}"
        member = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        watch = LocalWatch(tick: settings.tickInterval, tolerance: tolerance, queue: settings.deliveryQueue)
        do {
            calls = try RedisLink(endpoint)
            claims = try RedisLink(endpoint)
            inbox = try RedisLink(endpoint)
        } catch {
            throw error.countdownError
        }
        let box = "\(prefix):i:\(member)"
        watch.startThread(name: "cd-redis-claim") { [self] in claimDue() }
        let thread = Thread { [self] in
            nameCurrentThread("cd-redis-inbox")
            readInbox(box)
        }
        thread.start()
    }

    // MARK: Calls

    func start(key: String, duration: Duration, watch observer: LocalWatch.Watch) throws(CountdownError) -> CountdownStart {
        try settings.validate(key: key, duration: duration)
        guard !watch.isStopped else { throw .shutDown }
        let owner = newOwner()
        let reply = try run(ZSetScripts.start, startArguments(key, duration, owner: owner, attachOnly: false))
        return try started(reply, key: key, owner: owner, duration: duration, observer: observer)
    }

    func startMany(_ batch: [(String, Duration, LocalWatch.Watch)]) -> [Result<CountdownStart, CountdownError>] {
        var results = [Result<CountdownStart, CountdownError>?](repeating: nil, count: batch.count)
        var sent: [(index: Int, owner: String)] = []
        var arguments: [[String]] = []
        for (index, (key, duration, _)) in batch.enumerated() {
            do throws(CountdownError) {
                try settings.validate(key: key, duration: duration)
                guard !watch.isStopped else { throw .shutDown }
                let owner = newOwner()
                sent.append((index, owner))
                arguments.append(startArguments(key, duration, owner: owner, attachOnly: false))
            } catch {
                results[index] = .failure(error)
            }
        }
        do {
            let replies = try calls.runMany(ZSetScripts.start, keys: [prefix], arguments: arguments)
            for ((index, owner), reply) in zip(sent, replies) {
                if case .error(let why) = reply {
                    results[index] = .failure(.unavailable("the server refused: \(why)"))
                    continue
                }
                results[index] = Result { () throws(CountdownError) in try started(reply, key: batch[index].0, owner: owner, duration: batch[index].1, observer: batch[index].2) }
            }
        } catch {
            for (index, _) in sent { results[index] = .failure(error.countdownError) }
        }
        return results.map { $0! }
    }

    func attach(key: String, watch observer: LocalWatch.Watch) throws(CountdownError) -> Duration? {
        guard !key.isEmpty, !watch.isStopped else { return nil }
        let owner = newOwner()
        let reply = try run(ZSetScripts.start, startArguments(key, .nanoseconds(1), owner: owner, attachOnly: true))
        guard reply.elements.first?.int == 1,
              case .attached(let remaining) = try started(reply, key: key, owner: owner, duration: .zero, observer: observer)
        else { return nil }
        return remaining
    }

    func cancel(key: String) throws(CountdownError) -> Bool {
        guard !key.isEmpty, !watch.isStopped else { return false }
        let reply = try run(ZSetScripts.cancel, [member, canonicalKey(key)]).elements
        guard reply.first?.int == 1, let generation = reply[1].int else { return false }
        watch.end(generation: generation)
        return true
    }

    func pause(key: String) throws(CountdownError) -> Bool {
        guard !key.isEmpty, !watch.isStopped else { return false }
        let reply = try run(ZSetScripts.pause, [member, canonicalKey(key)]).elements
        guard reply.first?.int == 1, let generation = reply[1].int, let left = reply[2].int else { return false }
        watch.pause(generation: generation, remaining: left * 1000)
        return true
    }

    func resume(key: String) throws(CountdownError) -> Bool {
        guard !key.isEmpty, !watch.isStopped else { return false }
        let reply = try run(ZSetScripts.resume, [member, canonicalKey(key)]).elements
        let received = LocalWatch.now()
        guard reply.first?.int == 1, let generation = reply[1].int, let deadline = reply[2].int,
              let now = reply[3].int else { return false }
        let local = localInstant(deadline, serverNow: now, receivedAt: received)
        watch.resume(generation: generation, deadline: local)
        watch.claim(at: local)
        return true
    }

    func remaining(key: String) throws(CountdownError) -> Duration? {
        guard !key.isEmpty, !watch.isStopped else { return nil }
        let reply = try run(ZSetScripts.remaining, [canonicalKey(key)]).elements
        guard reply.first?.int == 1, let left = reply[1].int else { return nil }
        return .microseconds(left)
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
        // Wakes the inbox reader's blocking pop, so that its thread ends now rather than at the
        // pop's timeout.
        _ = try? calls.call(["RPUSH", "\(prefix):i:\(member)", "q"])
    }

    // MARK: Answers

    /// A new observer's token: `member/serial`.
    private func newOwner() -> String { "\(member)/\(observerSerial.add(1, ordering: .relaxed).newValue)" }

    private func startArguments(_ key: String, _ duration: Duration, owner: String, attachOnly: Bool) -> [String] {
        // Whole microseconds, rounded up: the server's clock counts them, and a countdown must
        // never end early.
        let micros = (duration.nanoseconds + 999) / 1000
        return [member, owner, canonicalKey(key), String(micros), String(settings.capacity ?? -1), attachOnly ? "1" : "0"]
    }

    /// A start's or attach's answer: what this member now observes, and what the caller hears.
    private func started(
        _ reply: RedisReply, key: String, owner: String, duration requested: Duration, observer: LocalWatch.Watch
    ) throws(CountdownError) -> CountdownStart {
        let received = LocalWatch.now()
        let answer = try StartAnswer(reply)
        switch answer.outcome {
        case .overCapacity: throw .capacityExceeded(capacity: settings.capacity ?? 0)
        case .nothingToAttach: throw .unavailable("attached to nothing")  // attach asks only when there is one
        case .started, .attached: break
        }
        updateOffset(serverNow: answer.now, receivedAt: received)
        let deadline = try answer.observe(
            in: watch, key: canonicalKey(key), owner: owner, requested: requested, observer: observer, receivedAt: received)
        if answer.outcome == .started, let deadline { watch.claim(at: deadline) }
        return answer.answer
    }

    // MARK: The claimer and the inbox

    /// On the claimer's thread: claims what is due, delivers the finishes observed here, and
    /// returns when the next deadline is due (nil: none).
    private func claimDue() -> Int64? {
        while true {
            let reply: RedisReply
            do {
                reply = try claims.run(ZSetScripts.claim, keys: [prefix], arguments: [member, String(Self.claimBatch)])
            } catch {
                return LocalWatch.now() + 100_000_000  // Redis is away: look again in 100 ms
            }
            let received = LocalWatch.now()
            let fields = reply.elements
            guard fields.count == 4, let now = fields[0].int, let claimed = fields[2].int else { return nil }
            updateOffset(serverNow: now, receivedAt: received)
            let here = fields[3].elements
            for index in stride(from: 0, to: here.count - 1, by: 2) {
                if let generation = here[index].int, let owner = here[index + 1].text {
                    watch.finish(generation: generation, owner: owner)
                }
            }
            if claimed >= Self.claimBatch { continue }
            guard let earliest = fields[1].text.flatMap(Double.init), earliest >= 0 else { return nil }
            return localInstant(Int64(earliest), serverNow: now, receivedAt: received)
        }
    }

    /// On the inbox reader's thread until shutdown: what other members did to the countdowns
    /// observed here, and wake-ups.
    private func readInbox(_ box: String) {
        while !watch.isStopped {
            do {
                let popped = try inbox.call(["BLPOP", box, "1"]).elements
                guard popped.count == 2, let first = popped[1].text else { continue }
                var messages = [first]
                messages += try inbox.call(["LPOP", box, "512"]).elements.compactMap(\.text)
                for message in messages { if let message = FleetMessage(message) { handle(message) } }
            } catch {
                if !watch.isStopped { usleep(100_000) }
            }
        }
    }

    private func handle(_ message: FleetMessage) {
        switch message {
        case .finished(let generation, let owner): watch.finish(generation: generation, owner: owner)
        case .cancelled(let generation): watch.end(generation: generation)
        case .observerLost(let generation, let attachSerial): watch.end(generation: generation, attachedBefore: attachSerial)
        case .paused(let generation, let remaining): watch.pause(generation: generation, remaining: remaining * 1000)
        case .resumed(let generation, let deadline): watch.resume(generation: generation, deadline: localInstant(deadline))
        case .wake(let deadline): watch.claim(at: localInstant(deadline))
        case .quit: break
        }
    }

    // MARK: Clocks and calls

    /// A deadline on the server's clock (µs) as a monotonic instant here, from an answer that
    /// told the server's time as well.
    private func localInstant(_ serverMicros: Int64, serverNow: Int64, receivedAt: Int64) -> Int64 {
        receivedAt + (serverMicros - serverNow) * 1000
    }

    /// A deadline on the server's clock as an instant here, from the last offset measured.
    private func localInstant(_ serverMicros: Int64) -> Int64 {
        serverMicros * 1000 - serverOffset.load(ordering: .relaxed)
    }

    private func updateOffset(serverNow: Int64, receivedAt: Int64) {
        serverOffset.store(serverNow * 1000 - receivedAt, ordering: .relaxed)
    }

    private func run(_ script: RedisScript, _ arguments: [String]) throws(CountdownError) -> RedisReply {
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
        for case .error(let why) in replies { throw RedisFailure.server(why).countdownError }
        return replies
    }
}
#endif
