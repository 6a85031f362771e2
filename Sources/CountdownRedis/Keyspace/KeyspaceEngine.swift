#if Redis
import Countdown
import CountdownSupport
import Dispatch
import Foundation
import Synchronization

/// The keyspace strategy's engine: a key with a TTL per countdown, its end heard as Redis'
/// `expired` notification on a subscriber connection, as the tutorials build it. Two
/// connections: the callers' (``RedisPipe``, many calls at once) and the subscriber's
/// (``KeyspaceSubscriber``, a thread's own).
final class KeyspaceEngine: ScriptedFleetEngine {
    let settings: SchedulerSettings
    let watch: LocalWatch
    let member: String
    private let prefix: String
    private let calls: RedisPipe
    private let subscriber: KeyspaceSubscriber
    private let clock: ServerClock
    private let observerSerial = Atomic<Int64>(0)
    let unavailableCalls = Atomic<Int>(0)
    let background = BackgroundFailures()
    let scripts = FleetScripts(cancel: KeyspaceScripts.cancel, pause: KeyspaceScripts.pause, resume: KeyspaceScripts.resume, remaining: KeyspaceScripts.remaining)
    /// How far ahead of its deadline here an expiry is still taken as this countdown's, beyond
    /// its ``ObservedCountdown/lead`` (how late its answer may have placed it): the server
    /// expires by whole milliseconds.
    private static let expirySlack: Int64 = 3_000_000

    init(endpoint: RedisEndpoint, namespace: String, settings: SchedulerSettings, cluster: ClusterMap? = nil) throws(CountdownError) {
        self.settings = settings
        prefix = "{\(namespace)}"
        let member = newMemberName()
        self.member = member
        let watch = LocalWatch(tick: settings.tickInterval, queue: settings.deliveryQueue)
        self.watch = watch
        let clock = ServerClock()
        self.clock = clock
        do {
            calls = try RedisPipe(
                endpoint, client: "\(member):calls", name: "cd-redis-calls", preload: KeyspaceScripts.callers,
                route: cluster.map { ClusterRoute(map: $0, slot: ClusterSlot.of("{\(namespace)}")) })
        } catch {
            throw error.countdownError
        }
        do {
            subscriber = try KeyspaceSubscriber(
                endpoint: endpoint, prefix: prefix,
                onExpired: { key in watch.finishExpired(key: key, slack: Self.expirySlack) },
                onMessage: { message in Self.handle(message, watch: watch, clock: clock) },
                stopped: { watch.isStopped }, failed: { [background] in background.record($0, in: "the keyspace subscriber") })
        } catch {
            calls.stop()
            throw error.countdownError
        }
        watch.startTicks(name: "cd-redis-ticks")
        subscriber.start(name: "cd-redis-events", expiredPrefix: "\(prefix):t:")
    }

    // MARK: Calls

    func start(key: String, duration: Duration, observer: FleetObserver) -> FleetCall<CountdownStart> {
        do throws(CountdownError) {
            try settings.validate(key: key, duration: duration)
        } catch {
            return .answered(.failure(error))
        }
        return startOrAttach(key: key, duration: duration, observer: observer, attachOnly: false).map { $0 ?? .started }
    }

    /// One call per start, as the tutorials make them (pipelined, a few on the wire at once).
    func startMany(_ batch: [(String, Duration, FleetObserver)]) -> FleetBatch {
        FleetBatch(count: batch.count, calls: batch.enumerated().map { index, item in
            (start(key: item.0, duration: item.1, observer: item.2).map { [(index, .success($0))] }, [index])
        })
    }

    func attach(key: String, observer: FleetObserver) -> FleetCall<Duration?> {
        guard !key.isEmpty, !watch.isStopped else { return .done(nil) }
        return startOrAttach(key: key, duration: .zero, observer: observer, attachOnly: true).map { start in
            if case .attached(let remaining) = start { remaining } else { nil }
        }
    }

    /// Every key of the namespace, by `SCAN` (what a tutorial's "list the windows" does).
    func activeKeys() -> FleetCall<[String]> {
        guard !watch.isStopped else { return .done([]) }
        return scan(from: "0", found: [])
    }

    private func scan(from cursor: String, found: [String]) -> FleetCall<[String]> {
        let pattern = "\(Self.escapeGlob(prefix)):t:*"
        let strip = "\(prefix):t:".utf8.count
        return .send(calls, [.command(["SCAN", cursor, "MATCH", pattern, "COUNT", "1000"])]) { [self] replies throws(CountdownError) in
            let fields = replies[0].elements
            guard fields.count == 2, let next = fields[0].text else { throw .unavailable(.protocol, "unexpected answer \(replies[0])") }
            let keys = found + fields[1].elements.compactMap(\.text).map { String(decoding: $0.utf8.dropFirst(strip), as: UTF8.self) }
            return next == "0" ? .done(Array(Set(keys))) : scan(from: next, found: keys)  // SCAN may return a key twice
        }
    }

    func activeCount() -> FleetCall<Int> { activeKeys().map(\.count) }

    func shutdown() {
        guard !watch.isStopped else { return }
        watch.shutdown()
        // Wakes the subscriber, so that its thread ends now rather than at its next poll.
        _ = try? FleetCall<Bool>.send(calls, [.command(["PUBLISH", "\(prefix):own", "q"])]) { _ in .done(true) }.wait()
        calls.stop()
    }

    // MARK: Answers

    private func startOrAttach(key: String, duration: Duration, observer: FleetObserver, attachOnly: Bool)
        -> FleetCall<CountdownStart?>
    {
        let token = "\(member)/\(observerSerial.add(1, ordering: .relaxed).newValue)"
        let key = canonicalKey(key)
        guard watch.expect(token, key: key) else { return .answered(.failure(.shutDown)) }
        let micros = (duration.nanoseconds + 999) / 1000
        let sent = LocalWatch.now()
        let part: FleetCall<Bool>.Part
        do throws(CountdownError) {
            part = try request(KeyspaceScripts.start, key: key, [token, key, String(micros), attachOnly ? "1" : "0"])
        } catch {
            watch.abandon(token)
            return .answered(.failure(error))
        }
        return .send([part], then: { [self] replies throws(CountdownError) in
            let received = LocalWatch.now()
            let answer: StartAnswer
            do throws(CountdownError) {
                answer = try StartAnswer(replies[0])
            } catch {
                watch.abandon(token)
                throw error
            }
            guard answer.outcome == .started || answer.outcome == .attached else {
                watch.abandon(token)
                return .done(nil)
            }
            clock.update(serverNow: answer.now, receivedAt: received)
            // The key was free: a countdown observed here under it whose deadline passed expired,
            // its notification not heard yet (the start's own lazy expiry sends it): it finishes.
            if answer.outcome == .started { watch.finishFreed(key: key, slack: Self.expirySlack) }
            let observation = answer.observation(key: key, token: token, requested: duration, observer: observer, receivedAt: received, sentAt: sent)
            guard watch.observe(observation) else { throw .shutDown }
            return .done(answer.answer)
        }, failed: { [watch] _ in watch.abandon(token) })
    }

    /// What another member published about a countdown (its own too: applying a notice twice
    /// changes nothing), or the quit that wakes the subscriber.
    private static func handle(_ message: FleetMessage, watch: LocalWatch, clock: ServerClock) {
        if let notice = FleetNotice(message, clock: clock) { watch.receive(notice) }
    }

    func resumed(key: String, dueAt deadline: Int64) {}

    func request(_ script: RedisScript, key: String, _ arguments: [String]) throws(CountdownError) -> FleetCall<Bool>.Part {
        if let fault = subscriber.fault { throw fault }
        return (calls, [.script(script, keys: [prefix], arguments: arguments)])
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
