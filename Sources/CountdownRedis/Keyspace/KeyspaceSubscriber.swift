#if Redis
import Countdown
import CountdownSupport
import Foundation

/// The keyspace strategy's subscriber: a connection of its own on Redis' `expired` channel and
/// the namespace's, read by a thread of its own. Every time it connects, it first makes sure the
/// server notifies expired keys (`notify-keyspace-events` with `E` and `x`), which a restarted
/// server forgets unless its configuration file says so; a server that refuses to (an ACL
/// without `CONFIG`) is a fault every call then reports (``fault``). What was published while
/// it was away is lost, as pub/sub loses it: that is the strategy's, and measured.
final class KeyspaceSubscriber: Sendable {
    private let endpoint: RedisEndpoint
    private let channel: String
    private let onExpired: @Sendable (String) -> Void
    private let onMessage: @Sendable (FleetMessage) -> Void
    private let stopped: @Sendable () -> Bool
    private let failed: @Sendable (RedisFailure) -> Void
    private let refused = Locked<CountdownError?>(nil)
    private let handOver: HandOver

    /// Connects and subscribes at once, so that a server that cannot notify is `init`'s error.
    init(
        endpoint: RedisEndpoint, prefix: String, onExpired: @escaping @Sendable (String) -> Void,
        onMessage: @escaping @Sendable (FleetMessage) -> Void, stopped: @escaping @Sendable () -> Bool,
        failed: @escaping @Sendable (RedisFailure) -> Void = { _ in }
    ) throws(RedisFailure) {
        self.failed = failed
        self.endpoint = endpoint
        channel = "\(prefix):own"
        self.onExpired = onExpired
        self.onMessage = onMessage
        self.stopped = stopped
        handOver = HandOver(try Self.subscribe(endpoint, channel: channel))
    }

    /// Why calls fail while the server does not notify expired keys and will not be made to.
    var fault: CountdownError? { refused.withLock { $0 } }

    func start(name: String, expiredPrefix: String) {
        let thread = Thread { [self] in
            nameCurrentThread(name)
            listen(handOver.take(), expiredPrefix: expiredPrefix)
        }
        thread.start()
    }

    /// Hands the connection made by `init` (so that a failure is `init`'s) to the thread that
    /// reads it. `@unchecked Sendable`: a hiredis connection is not thread-safe, and this
    /// passes it once, from the thread that made it to the one that alone uses it after.
    private final class HandOver: @unchecked Sendable {
        private var connection: RedisConnection?
        init(_ connection: RedisConnection) { self.connection = connection }
        func take() -> RedisConnection? {
            defer { connection = nil }
            return connection
        }
    }

    /// On the thread until shutdown. A dropped connection is made again, notifications
    /// re-asserted first.
    private func listen(_ first: RedisConnection?, expiredPrefix: String) {
        var connection = first
        while !stopped() {
            do {
                if connection == nil {
                    connection = try Self.subscribe(endpoint, channel: channel)
                    refused.withLock { $0 = nil }
                }
                guard let pushed = try connection!.nextPushed(within: .milliseconds(200)) else { continue }
                let fields = pushed.elements
                guard fields.count == 3, fields[0].text == "message", let channel = fields[1].text,
                      let payload = fields[2].text else { continue }
                if channel.hasSuffix(":expired") {
                    guard payload.hasPrefix(expiredPrefix) else { continue }
                    onExpired(String(payload.dropFirst(expiredPrefix.count)))
                } else if let message = FleetMessage(payload) {
                    onMessage(message)
                }
            } catch {
                connection = nil
                if !stopped() { failed(error) }
                var refusal = false
                if case .server(let text) = error {
                    refused.withLock { $0 = RedisFailure.server(text).countdownError }
                    refusal = true
                }
                if !stopped() { usleep(refusal ? 1_000_000 : 50_000) }
            }
        }
    }

    /// A new connection that notifies expired keys (asserted first) and listens on the
    /// namespace's channel.
    private static func subscribe(_ endpoint: RedisEndpoint, channel: String) throws(RedisFailure) -> RedisConnection {
        let connection = try RedisConnection(endpoint, timeout: min(endpoint.connectTimeout, .seconds(1)))
        try enableExpiredEvents(connection)
        try connection.append(["SUBSCRIBE", "__keyevent@\(endpoint.database)__:expired", channel])
        // Each channel answers on its own; a refused one answers an error (NOPERM), and only
        // one: the second read would wait out the timeout (a grant missing read as a timeout).
        try withoutSIGPIPE { () throws(RedisFailure) in
            for _ in 0..<2 {
                if case .error(let text) = try connection.read() { throw .server("SUBSCRIBE: \(text)") }
            }
        }
        return connection
    }

    /// The notifications the strategy rests on: `E` (keyevent channels) and `x` (expired).
    private static func enableExpiredEvents(_ connection: RedisConnection) throws(RedisFailure) {
        let got = try connection.call(["CONFIG", "GET", "notify-keyspace-events"])
        if case .error(let text) = got {
            throw .server("expired notifications cannot be checked (CONFIG GET notify-keyspace-events): \(text)")
        }
        let current = got.elements.last?.text ?? ""
        guard !(current.contains("E") && (current.contains("x") || current.contains("A"))) else { return }
        let wanted = String(Set(current + "Ex"))
        if case .error(let text) = try connection.call(["CONFIG", "SET", "notify-keyspace-events", wanted]) {
            throw .server("expired notifications are off and cannot be turned on (notify-keyspace-events Ex): \(text)")
        }
    }
}
#endif
