#if Redis
import Countdown
import CountdownSupport
import Dispatch
import Foundation
import Synchronization

/// The keyspace strategy's engine: a key with a TTL per countdown, its end heard as Redis'
/// `expired` notification on a subscriber connection, as the tutorials build it. Two
/// connections: the callers' and the subscriber's (``KeyspaceSubscriber``, a thread's own).
final class KeyspaceEngine: ScriptedFleetEngine {
    let settings: SchedulerSettings
    let watch: LocalWatch
    let member: String
    private let prefix: String
    private let calls: RedisLink
    private let subscriber: KeyspaceSubscriber
    private let clock: ServerClock
    private let observerSerial = Atomic<Int64>(0)
    let unavailableCalls = Atomic<Int>(0)
    let background = BackgroundFailures()
    let scripts = FleetScripts(cancel: KeyspaceScripts.cancel, pause: KeyspaceScripts.pause, resume: KeyspaceScripts.resume, remaining: KeyspaceScripts.remaining)
    /// How far ahead of its deadline here an expiry is still taken as this countdown's: the
    /// server expires by whole milliseconds, and the offset to its clock is measured per call.
    private static let expirySlack: Int64 = 3_000_000

    init(endpoint: RedisEndpoint, namespace: String, settings: SchedulerSettings) throws(CountdownError) {
        self.settings = settings
        prefix = "{\(namespace)}"
        let member = newMemberName()
        self.member = member
        let watch = LocalWatch(tick: settings.tickInterval, queue: settings.deliveryQueue)
        self.watch = watch
        let clock = ServerClock()
        self.clock = clock
        do {
            calls = try RedisLink(endpoint, client: "\(member):calls")
            subscriber = try KeyspaceSubscriber(
                endpoint: endpoint, prefix: prefix,
                onExpired: { key in watch.finishExpired(key: key, slack: Self.expirySlack) },
                onMessage: { message in Self.handle(message, watch: watch, clock: clock) },
                stopped: { watch.isStopped }, failed: { [background] in background.record($0, in: "the keyspace subscriber") })
        } catch {
            throw error.countdownError
        }
        watch.startTicks(name: "cd-redis-ticks")
        subscriber.start(name: "cd-redis-events", expiredPrefix: "\(prefix):t:")
    }

    // MARK: Calls

    func start(key: String, duration: Duration, observer: FleetObserver) throws(CountdownError) -> CountdownStart {
        try settings.validate(key: key, duration: duration)
        return try startOrAttach(key: key, duration: duration, observer: observer, attachOnly: false) ?? .started
    }

    func startMany(_ batch: [(String, Duration, FleetObserver)]) -> [Result<CountdownStart, CountdownError>] {
        batch.map { key, duration, observer in
            Result { () throws(CountdownError) in try start(key: key, duration: duration, observer: observer) }
        }
    }

    func attach(key: String, observer: FleetObserver) throws(CountdownError) -> Duration? {
        guard !key.isEmpty, !watch.isStopped else { return nil }
        guard case .attached(let remaining) = try startOrAttach(key: key, duration: .zero, observer: observer, attachOnly: true)
        else { return nil }
        return remaining
    }

    /// Every key of the namespace, by `SCAN` (what a tutorial's "list the windows" does).
    func activeKeys() throws(CountdownError) -> [String] {
        guard !watch.isStopped else { return [] }
        let pattern = "\(Self.escapeGlob(prefix)):t:*"
        let strip = "\(prefix):t:".utf8.count
        var cursor = "0", keys: [String] = []
        repeat {
            let reply: RedisReply
            do {
                reply = try calls.call(["SCAN", cursor, "MATCH", pattern, "COUNT", "1000"])
            } catch {
                throw error.countdownError
            }
            let fields = reply.elements
            guard fields.count == 2, let next = fields[0].text else { throw .unavailable(.protocol, "unexpected answer \(reply)") }
            cursor = next
            keys += fields[1].elements.compactMap(\.text).map { String(decoding: $0.utf8.dropFirst(strip), as: UTF8.self) }
        } while cursor != "0"
        return Array(Set(keys))  // SCAN may return a key twice
    }

    func activeCount() throws(CountdownError) -> Int { try activeKeys().count }

    func shutdown() {
        guard !watch.isStopped else { return }
        watch.shutdown()
        // Wakes the subscriber, so that its thread ends now rather than at its next poll.
        _ = try? calls.call(["PUBLISH", "\(prefix):own", "q"])
    }

    // MARK: Answers

    private func startOrAttach(key: String, duration: Duration, observer: FleetObserver, attachOnly: Bool)
        throws(CountdownError) -> CountdownStart?
    {
        let token = "\(member)/\(observerSerial.add(1, ordering: .relaxed).newValue)"
        guard watch.expect(token) else { throw .shutDown }
        let micros = (duration.nanoseconds + 999) / 1000
        let key = canonicalKey(key)
        let received: Int64, answer: StartAnswer
        do throws(CountdownError) {
            answer = try StartAnswer(run(KeyspaceScripts.start, key: key, [token, key, String(micros), attachOnly ? "1" : "0"]))
            received = LocalWatch.now()
        } catch {
            watch.abandon(token)
            throw error
        }
        guard answer.outcome == .started || answer.outcome == .attached else {
            watch.abandon(token)
            return nil
        }
        clock.update(serverNow: answer.now, receivedAt: received)
        // The key was free: a countdown observed here under it whose deadline passed expired,
        // its notification not heard yet (the start's own lazy expiry sends it): it finishes.
        if answer.outcome == .started { watch.finishExpired(key: key, slack: Self.expirySlack) }
        let observation = answer.observation(key: key, token: token, requested: duration, observer: observer, receivedAt: received)
        guard watch.observe(observation) else { throw .shutDown }
        return answer.answer
    }

    /// What another member published about a countdown (its own too: applying a notice twice
    /// changes nothing), or the quit that wakes the subscriber.
    private static func handle(_ message: FleetMessage, watch: LocalWatch, clock: ServerClock) {
        if let notice = FleetNotice(message, clock: clock) { watch.receive(notice) }
    }

    func resumed(key: String, dueAt deadline: Int64) {}

    func run(_ script: RedisScript, key: String, _ arguments: [String]) throws(CountdownError) -> RedisReply {
        if let fault = subscriber.fault { throw fault }
        do {
            return try calls.run(script, keys: [prefix], arguments: arguments)
        } catch {
            throw error.countdownError
        }
    }

    /// `SCAN MATCH` reads glob characters; a namespace holding them is matched literally.
    private static func escapeGlob(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "*?[]\\".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }
}
#endif
