#if Redis
import Countdown

/// The scripts of a strategy whose cancel, pause, resume and remaining answer alike: {now, 1,
/// generation, owner}, {now, 1, generation, remaining µs, owner}, {now, 1, generation,
/// deadline µs, owner}, the last two followed by the countdown's change number (its pauses and
/// resumes so far), or {now, 0}; and {1, remaining µs} or {0}.
struct FleetScripts: Sendable {
    let cancel: RedisScript
    let pause: RedisScript
    let resume: RedisScript
    let remaining: RedisScript
}

/// What both strategies' engines share: the calls that change or read one countdown, from their
/// own scripts, the change reported to this member's registry under the token the server named
/// (the observer may be here, or elsewhere: then the registry drops it).
protocol ScriptedFleetEngine: FleetEngine {
    var scripts: FleetScripts { get }
    /// One of the strategy's scripts about `key` (canonical): the callers' pipe for it and the
    /// request; throws when this member cannot call now.
    func request(_ script: RedisScript, key: String, _ arguments: [String]) throws(CountdownError) -> FleetCall<Bool>.Part
    /// The countdown under `key` runs again and is due at `deadline` (monotonic): its claimer looks then.
    func resumed(key: String, dueAt deadline: Int64)
}

extension ScriptedFleetEngine {
    /// `script` about `key` with `arguments`, its one reply handed to `then`.
    func call<Answer>(
        _ script: RedisScript, key: String, _ arguments: [String],
        then: @escaping @Sendable (RedisReply) throws(CountdownError) -> Answer
    ) -> FleetCall<Answer> {
        do {
            let part = try request(script, key: key, arguments)
            return .send([part], then: { (replies: [RedisReply]) throws(CountdownError) in .done(try then(replies[0])) }, failed: { _ in })
        } catch {
            return .answered(.failure(error))
        }
    }

    func cancel(key: String) -> FleetCall<Bool> {
        guard !key.isEmpty, !watch.isStopped else { return .done(false) }
        let key = canonicalKey(key)
        return call(scripts.cancel, key: key, [key]) { [watch] reply in
            let reply = reply.elements
            guard reply.count >= 4, reply[1].int == 1, let generation = reply[2].int, let token = reply[3].text else {
                watch.ownCancelFoundNothing(key: key)
                return false
            }
            watch.receive(FleetNotice(generation: generation, token: token, kind: .cancelled))
            return true
        }
    }

    func pause(key: String) -> FleetCall<Bool> {
        guard !key.isEmpty, !watch.isStopped else { return .done(false) }
        let key = canonicalKey(key)
        return call(scripts.pause, key: key, [key]) { [watch] reply in
            let reply = reply.elements
            guard reply.count >= 6, reply[1].int == 1, let generation = reply[2].int, let left = reply[3].int,
                  let token = reply[4].text, let change = reply[5].int else { return false }
            watch.receive(FleetNotice(generation: generation, token: token, kind: .paused(remaining: left * 1000, change: change)))
            return true
        }
    }

    func resume(key: String) -> FleetCall<Bool> {
        guard !key.isEmpty, !watch.isStopped else { return .done(false) }
        let key = canonicalKey(key)
        return call(scripts.resume, key: key, [key]) { [self] reply in
            let reply = reply.elements
            let received = LocalWatch.now()
            guard reply.count >= 6, let now = reply[0].int, reply[1].int == 1, let generation = reply[2].int,
                  let deadline = reply[3].int, let token = reply[4].text, let change = reply[5].int else { return false }
            let local = ServerClock.local(deadline, serverNow: now, receivedAt: received)
            watch.receive(FleetNotice(generation: generation, token: token, kind: .resumed(deadline: local, change: change)))
            resumed(key: key, dueAt: local)
            return true
        }
    }

    func remaining(key: String) -> FleetCall<Duration?> {
        guard !key.isEmpty, !watch.isStopped else { return .done(nil) }
        let key = canonicalKey(key)
        return call(scripts.remaining, key: key, [key]) { reply in
            let reply = reply.elements
            guard reply.first?.int == 1, reply.count >= 2, let left = reply[1].int else { return nil }
            return .microseconds(left)
        }
    }
}
#endif
