#if Redis
import CountdownSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection to Redis, one call at a time, made again when it broke: a member's own
/// threads' (the claimer, the inbox reader), whose blocking calls wait on no caller, and
/// `init`'s checks. The callers' calls go through a ``RedisPipe``, many at once.
///
/// Every call is safe to send twice, so a call whose connection broke, was closed or timed out
/// before its answer was read is sent again on a new connection, with backoff, for as long as
/// its ``Patience`` allows: a read or a plain command is idempotent by itself, and a script that
/// changes something is recorded (``CallRecord``): each carries this link's client id and a
/// serial that stays the same across its resends, and the server answers a resend with the
/// answer it kept, without doing anything twice. An error the server answers is thrown, never
/// swallowed; `LOADING` and `BUSY` wait and resend, as a connection failure does.
final class RedisLink: Sendable {
    /// How long a call keeps trying before it throws.
    enum Patience: Sendable {
        /// Resends within this long of the first send, then throws the last failure; `.zero`
        /// never resends (a call whose resend would not be answered the same, as a blocking
        /// pop: its caller recovers in its own way).
        case within(Duration)
        /// Resends, 100 ms apart at most, until it is answered or `stopped` says so (a
        /// background thread: the claimer, the inbox reader), then throws.
        case untilStopped(@Sendable () -> Bool)
    }

    let endpoint: RedisEndpoint
    /// The name this link's recorded calls are kept under: `<member>:<role>`.
    let client: String
    private let commandTimeout: RedisConnection.CommandTimeout
    private let patience: Patience
    /// On purpose, for the suite's own tests (``FleetDefects/newSerialOnResend``).
    private let newSerialOnResend: Bool
    /// Where the link goes when its node fails, on a cluster (nil: back to the endpoint).
    private let route: ClusterRoute?

    private struct Slot {
        var connection: RedisConnection?
        /// Where the calls go once a cluster said the slot lives there (`MOVED`); nil: the
        /// endpoint's own address.
        var node: RedisEndpoint?
        /// Each script's digest, from `SCRIPT LOAD`.
        var digests: [String: String] = [:]
        /// The serial of the next recorded call.
        var nextSerial: Int64 = 1
        /// Connections made so far, each answered its first command (``connectionsMade``).
        var made = 0
    }

    /// How many answers the server keeps for this link (``CallRecord``): a quarter of them at
    /// most are in flight at once, so a record is reused only long after its call was answered.
    let ring: Int

    private let slot: Locked<Slot>

    /// Connects at once, so that an unreachable server is an error of the caller's `init`.
    init(
        _ endpoint: RedisEndpoint, client: String, commandTimeout: RedisConnection.CommandTimeout = .endpoint,
        patience: Patience = .within(.seconds(1)), ring: Int = 1024, route: ClusterRoute? = nil, defects: FleetDefects = []
    ) throws(RedisFailure) {
        self.route = route
        self.endpoint = endpoint
        self.client = client
        self.ring = max(ring, 4)
        newSerialOnResend = defects.contains(.newSerialOnResend)
        self.commandTimeout = commandTimeout
        self.patience = patience
        let (connection, node) = try ClusterRoute.connect(endpoint, route, commandTimeout: commandTimeout)
        slot = Locked(Slot(connection: connection, node: node, made: 1))
    }

    /// How many connections this link has made, each one the server answered (its `PING`,
    /// `AUTH` or `SELECT`): one that grew since a failure says the server answers, and the
    /// connection broke after (a dropped answer, a reset), not that nothing answers.
    var connectionsMade: Int { slot.withLock { $0.made } }

    func call(_ arguments: [String]) throws(RedisFailure) -> RedisReply {
        try withConnection { (_: inout Slot, connection: RedisConnection) throws(RedisFailure) in
            try Self.checked(connection.call(arguments))
        }
    }

    /// Commands in one round trip; their replies in order (an error among them is a reply).
    func pipeline(_ commands: [[String]]) throws(RedisFailure) -> [RedisReply] {
        try withConnection { (_: inout Slot, connection: RedisConnection) throws(RedisFailure) in
            let replies = try connection.pipeline(commands)
            for case .error(let text) in replies where Self.resendable(text) { throw .server(text) }
            return replies
        }
    }

    /// Runs `script` with `keys` and `arguments`: one round trip, atomic on the server.
    func run(_ script: RedisScript, keys: [String], arguments: [String]) throws(RedisFailure) -> RedisReply {
        var reply = RedisReply.null
        try runStreaming(script, keys: keys, arguments: [arguments]) { _, answer in reply = answer }
        if case .error(let text) = reply { throw .server(text) }
        return reply
    }

    /// Runs `script` once per argument list with `window` calls in flight (a quarter of the ring
    /// at most, so that a record is reused only long after its call was answered): each reply is
    /// handed to `each` (with its call's index) as soon as it is read, while the server runs the
    /// calls after it, so that the caller's work on one answer and the server's on the next
    /// overlap. A recorded script's calls take consecutive serials, kept across resends.
    /// After a broken connection only the calls whose replies were not handed over are sent
    /// again (a recorded call that ran answers the same). Throws when a call could not be
    /// answered within the link's patience: the calls from there on were not handed over.
    func runStreaming(
        _ script: RedisScript, keys: [String], arguments: [[String]], window: Int = 2, each: (Int, RedisReply) -> Void
    ) throws(RedisFailure) {
        try slot.withLock { (s: inout Slot) throws(RedisFailure) in
            var calls = numbered(arguments, script, &s)
            var delivered = 0
            var sent = false
            try retrying(&s) { (s: inout Slot, c: RedisConnection) throws(RedisFailure) in
                if sent, newSerialOnResend { calls = numbered(arguments, script, &s) }
                sent = true
                try Self.stream(script, keys, calls, window: min(max(window, 1), ring / 4), delivered: &delivered, &s, c, each)
            }
        }
    }

    /// ``runStreaming(_:keys:arguments:window:each:)`` on one connection, from the first call
    /// not yet handed over.
    private static func stream(
        _ script: RedisScript, _ keys: [String], _ calls: [[String]], window: Int, delivered: inout Int, _ s: inout Slot,
        _ c: RedisConnection, _ each: (Int, RedisReply) -> Void
    ) throws(RedisFailure) {
        var digest = try Self.digest(script, &s, c)
        try withoutSIGPIPE { () throws(RedisFailure) in
            var next = delivered
            while delivered < calls.count {
                while next < calls.count, next - delivered < window {
                    try c.append(["EVALSHA", digest, String(keys.count)] + keys + calls[next])
                    next += 1
                }
                try c.flush()
                let reply = try c.read()
                if case .error(let text) = reply, text.hasPrefix("NOSCRIPT") || resendable(text) {
                    // The calls in flight behind it are read and dropped: they are sent again.
                    for _ in delivered + 1..<next { _ = try c.read() }
                    next = delivered
                    guard text.hasPrefix("NOSCRIPT") else { throw .server(text) }
                    // The server restarted and lost its script cache: loaded again.
                    s.digests[script.name] = nil
                    digest = try Self.digest(script, &s, c)
                    continue
                }
                each(delivered, reply)
                delivered += 1
            }
        }
    }

    /// A recorded script's calls, each with this link's client name, its serial and the ring's size.
    private func numbered(_ arguments: [[String]], _ script: RedisScript, _ s: inout Slot) -> [[String]] {
        guard script.recorded else { return arguments }
        let first = s.nextSerial
        s.nextSerial += Int64(arguments.count)
        let size = String(ring)
        return arguments.enumerated().map { index, rest in [client, String(first + Int64(index)), size] + rest }
    }

    private func withConnection<T: Sendable>(_ body: (inout Slot, RedisConnection) throws(RedisFailure) -> T) throws(RedisFailure) -> T {
        try slot.withLock { (s: inout Slot) throws(RedisFailure) -> T in try retrying(&s, body) }
    }

    /// Runs `body` on the open connection, or a new one; sends it again on a new connection
    /// while the failure is the connection's (or the server's transient one) and patience lasts.
    /// A cluster's `MOVED` is followed at once, up to five times a call, for good: the link's
    /// calls go to that node from now on.
    private func retrying<T: Sendable>(
        _ s: inout Slot, _ body: (inout Slot, RedisConnection) throws(RedisFailure) -> T
    ) throws(RedisFailure) -> T {
        let began = SystemClocks.monotonic()
        var pause: UInt32 = 5_000
        var redirects = 0
        while true {
            do {
                let connection: RedisConnection
                if let open = s.connection, open.isOpen {
                    connection = open
                } else {
                    s.connection = nil
                    connection = try connect(s.node ?? endpoint)
                    s.connection = connection
                    s.made += 1
                }
                return try body(&s, connection)
            } catch {
                if let redirect = ClusterRedirect(error), redirect.kind == .moved, redirects < 5 {
                    redirects += 1
                    s.node = endpoint.at(redirect.address)
                    s.connection = nil
                    continue
                }
                guard error.isConnection || error.isTransient else { throw error }
                if error.isConnection {
                    // A node the slot moved to may be gone (a master killed, its replica
                    // promoted): on a cluster the map, read again from any node that answers,
                    // says where the slot is now; else the endpoint is asked again.
                    let failed = (s.node ?? endpoint).address
                    s.connection = nil
                    s.node = route?.endpoint(after: failed)
                }
                switch patience {
                case .within(let limit):
                    guard SystemClocks.monotonic() - began < UInt64(limit.nanoseconds) else { throw error }
                case .untilStopped(let stopped):
                    if stopped() { throw error }
                }
                usleep(pause)
                pause = min(pause * 2, 100_000)
            }
        }
    }

    /// A new connection to `node`: at most a second to connect, so that attempts fit in a
    /// second's patience.
    private func connect(_ node: RedisEndpoint) throws(RedisFailure) -> RedisConnection {
        try RedisConnection(node, timeout: min(node.connectTimeout, .seconds(1)), commandTimeout: commandTimeout)
    }

    /// A reply that is an error the server may answer differently soon, or elsewhere (a
    /// cluster's `MOVED`), is thrown, to be resent.
    private static func checked(_ reply: RedisReply) throws(RedisFailure) -> RedisReply {
        if case .error(let text) = reply, Self.resendable(text) { throw .server(text) }
        return reply
    }

    private static func resendable(_ text: String) -> Bool {
        RedisFailure.server(text).isTransient || ClusterRedirect(text) != nil
    }

    private static func digest(_ script: RedisScript, _ s: inout Slot, _ c: RedisConnection) throws(RedisFailure) -> String {
        if let known = s.digests[script.name] { return known }
        let reply = try checked(c.call(["SCRIPT", "LOAD", script.source]))
        guard case .string(let digest) = reply else {
            if case .error(let text) = reply { throw .server("\(text) (SCRIPT LOAD \(script.name))") }
            throw .connection(.protocol, "SCRIPT LOAD \(script.name) answered \(reply)")
        }
        s.digests[script.name] = digest
        return digest
    }
}
#endif
