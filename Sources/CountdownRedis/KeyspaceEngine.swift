#if Redis
import Countdown
import CountdownSupport
import Dispatch
import Foundation
import Synchronization

/// The keyspace strategy's engine: a key with a TTL per countdown, its end heard as Redis'
/// `expired` notification on a subscriber connection, as the tutorials build it. Two
/// connections: the callers' and the subscriber's (a thread's own).
final class KeyspaceEngine: FleetEngine {
    let settings: SchedulerSettings
    let watch: LocalWatch
    let member: String
    private let prefix: String
    private let calls: RedisLink
    private let endpoint: RedisEndpoint
    private let observerSerial = Atomic<Int64>(0)
    let unavailableCalls = Atomic<Int>(0)
    /// How far ahead of its deadline here an expiry is still taken as this countdown's: the
    /// server expires by whole milliseconds, and the offset to its clock is measured per call.
    private static let expirySlack: Int64 = 3_000_000
    /// The database whose expiries the subscriber hears (the connection's default).
    private static let database = 0

    init(endpoint: RedisEndpoint, namespace: String, settings: SchedulerSettings) throws(CountdownError) {
        self.settings = settings
        self.endpoint = endpoint
        prefix = "{\(namespace)}"
        member = String(UInt64.random(in: 0...UInt64.max), radix: 36)
        watch = LocalWatch(tick: settings.tickInterval, tolerance: .zero, queue: settings.deliveryQueue)
        let subscriber: RedisConnection
        do {
            calls = try RedisLink(endpoint)
            try Self.enableExpiredEvents(calls)
            subscriber = try Self.subscribe(endpoint, prefix: prefix)
        } catch {
            throw error.countdownError
        }
        watch.startThread(name: "cd-redis-ticks", claimer: nil)
        let handOver = SubscriberHandOver(subscriber)
        let thread = Thread { [self] in
            nameCurrentThread("cd-redis-events")
            listen(handOver.take())
        }
        thread.start()
    }

    /// Hands the subscriber connection, made by `init` so that a failure is `init`'s, to the
    /// thread that reads it. `@unchecked Sendable`: a hiredis connection is not thread-safe, and
    /// this passes it once, from the thread that made it to the one that alone uses it after.
    private final class SubscriberHandOver: @unchecked Sendable {
        private var connection: RedisConnection?
        init(_ connection: RedisConnection) { self.connection = connection }
        func take() -> RedisConnection? {
            defer { connection = nil }
            return connection
        }
    }

    // MARK: Calls

    func start(key: String, duration: Duration, watch observer: LocalWatch.Watch) throws(CountdownError) -> CountdownStart {
        try settings.validate(key: key, duration: duration)
        guard !watch.isStopped else { throw .shutDown }
        let reply = try run(KeyspaceScripts.start, startArguments(key, duration, attachOnly: false))
        return try started(reply, key: key, duration: duration, observer: observer)
    }

    func startMany(_ batch: [(String, Duration, LocalWatch.Watch)]) -> [Result<CountdownStart, CountdownError>] {
        batch.map { key, duration, observer in
            Result { () throws(CountdownError) in try start(key: key, duration: duration, watch: observer) }
        }
    }

    func attach(key: String, watch observer: LocalWatch.Watch) throws(CountdownError) -> Duration? {
        guard !key.isEmpty, !watch.isStopped else { return nil }
        let reply = try run(KeyspaceScripts.start, startArguments(key, .nanoseconds(1), attachOnly: true))
        guard reply.elements.first?.int == 1,
              case .attached(let remaining) = try started(reply, key: key, duration: .zero, observer: observer) else { return nil }
        return remaining
    }

    func cancel(key: String) throws(CountdownError) -> Bool {
        guard !key.isEmpty, !watch.isStopped else { return false }
        let reply = try run(KeyspaceScripts.cancel, [canonicalKey(key), member]).elements
        guard reply.first?.int == 1, let generation = reply[1].int else { return false }
        watch.end(generation: generation)
        return true
    }

    func pause(key: String) throws(CountdownError) -> Bool {
        guard !key.isEmpty, !watch.isStopped else { return false }
        let reply = try run(KeyspaceScripts.pause, [canonicalKey(key), member]).elements
        guard reply.first?.int == 1, let generation = reply[1].int, let left = reply[2].int else { return false }
        watch.pause(generation: generation, remaining: left * 1000)
        return true
    }

    func resume(key: String) throws(CountdownError) -> Bool {
        guard !key.isEmpty, !watch.isStopped else { return false }
        let reply = try run(KeyspaceScripts.resume, [canonicalKey(key), member]).elements
        let received = LocalWatch.now()
        guard reply.first?.int == 1, let generation = reply[1].int, let deadline = reply[2].int, let now = reply[3].int
        else { return false }
        watch.resume(generation: generation, deadline: received + (deadline - now) * 1000)
        return true
    }

    func remaining(key: String) throws(CountdownError) -> Duration? {
        guard !key.isEmpty, !watch.isStopped else { return nil }
        let reply = try run(KeyspaceScripts.remaining, [canonicalKey(key)]).elements
        guard reply.first?.int == 1, let left = reply[1].int else { return nil }
        return .microseconds(left)
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
            guard fields.count == 2, let next = fields[0].text else { throw .unavailable("unexpected answer \(reply)") }
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
        _ = try? calls.call(["PUBLISH", "\(prefix):own", "q \(member)"])
    }

    // MARK: Answers

    private func startArguments(_ key: String, _ duration: Duration, attachOnly: Bool) -> [String] {
        let owner = "\(member)/\(observerSerial.add(1, ordering: .relaxed).newValue)"
        let micros = (duration.nanoseconds + 999) / 1000
        return [owner, canonicalKey(key), String(micros), attachOnly ? "1" : "0"]
    }

    private func started(
        _ reply: RedisReply, key: String, duration requested: Duration, observer: LocalWatch.Watch
    ) throws(CountdownError) -> CountdownStart {
        let received = LocalWatch.now()
        let answer = try StartAnswer(reply)
        guard answer.outcome == .started || answer.outcome == .attached else { throw .unavailable("attached to nothing") }
        let key = canonicalKey(key)
        // The key was free: a countdown observed here under it whose deadline passed expired,
        // its notification not heard yet (the start's own lazy expiry sends it): it finishes.
        if answer.outcome == .started { watch.finishExpired(key: key, slack: Self.expirySlack) }
        _ = try answer.observe(in: watch, key: key, owner: nil, requested: requested, observer: observer, receivedAt: received)
        return answer.answer
    }

    // MARK: The subscriber

    /// The notifications the strategy rests on: `E` (keyevent channels) and `x` (expired).
    private static func enableExpiredEvents(_ link: RedisLink) throws(RedisFailure) {
        let current = try link.call(["CONFIG", "GET", "notify-keyspace-events"]).elements.last?.text ?? ""
        guard !(current.contains("E") && (current.contains("x") || current.contains("A"))) else { return }
        let wanted = String(Set(current + "Ex"))
        let reply = try link.call(["CONFIG", "SET", "notify-keyspace-events", wanted])
        if case .error(let why) = reply {
            throw .server("expired notifications are off and cannot be turned on (notify-keyspace-events Ex): \(why)")
        }
    }

    private static func subscribe(_ endpoint: RedisEndpoint, prefix: String) throws(RedisFailure) -> RedisConnection {
        let connection = try RedisConnection(endpoint, timeout: .seconds(1), commandTimeout: .seconds(5))
        try connection.append(["SUBSCRIBE", "__keyevent@\(database)__:expired", "\(prefix):own"])
        for _ in 0..<2 { _ = try connection.read() }
        return connection
    }

    /// On the subscriber's thread until shutdown. A dropped connection is made again; what was
    /// published meanwhile is lost, as pub/sub loses it.
    private func listen(_ first: RedisConnection?) {
        var connection = first
        let expiredPrefix = "\(prefix):t:"
        while !watch.isStopped {
            do {
                if connection == nil { connection = try Self.subscribe(endpoint, prefix: prefix) }
                guard let pushed = try connection!.nextPushed(within: .milliseconds(200)) else { continue }
                let fields = pushed.elements
                guard fields.count == 3, fields[0].text == "message", let channel = fields[1].text,
                      let payload = fields[2].text else { continue }
                if channel.hasSuffix(":expired") {
                    guard payload.hasPrefix(expiredPrefix) else { continue }
                    watch.finishExpired(key: String(payload.dropFirst(expiredPrefix.count)), slack: Self.expirySlack)
                } else {
                    handle(payload)
                }
            } catch {
                connection = nil
                if !watch.isStopped { usleep(100_000) }
            }
        }
    }

    /// What another member published about a countdown (`l g owner`, `x g member`,
    /// `p g remaining member`, `r g deadline member`); its own are already done.
    private func handle(_ message: String) {
        let fields = message.split(separator: " ")
        guard fields.count >= 3, let generation = Int64(fields[1]) else { return }
        let author = fields[fields.count - 1].split(separator: "/").first.map(String.init)
        guard author != member else { return }
        switch fields[0] {
        case "l", "x": watch.end(generation: generation)
        case "p": if let left = Int64(fields[2]) { watch.pause(generation: generation, remaining: left * 1000) }
        case "r":
            // The deadline is on the server's clock: as an instant here, from this host's wall
            // clock, which on one machine or under NTP is the server's within a millisecond.
            if let deadline = Int64(fields[2]) {
                let offset = SystemClocks.wall() / 1000 - Int64(SystemClocks.monotonic() / 1000)
                watch.resume(generation: generation, deadline: (deadline - offset) * 1000)
            }
        default: break
        }
    }

    private func run(_ script: RedisScript, _ arguments: [String]) throws(CountdownError) -> RedisReply {
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
