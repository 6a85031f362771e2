#if Redis
import CountdownSupport

/// A Lua script run by its digest, loaded again when the server no longer has it (restarted).
struct RedisScript: Sendable {
    let name: String
    let source: String
}

/// One connection to Redis shared by a process's callers, one call at a time, made again when
/// it broke: the next call connects first. A call the server closed the connection on before
/// answering (a `CLIENT KILL`, an idle timeout, a restart) is sent once more on a new
/// connection; any other failure is thrown, never swallowed. The server may have run the call
/// before it closed: the start script answers a call sent again by its observer token as it
/// answered the first; a cancel, pause or resume sent again answers false where the first one
/// did the work.
final class RedisLink: Sendable {
    let endpoint: RedisEndpoint
    private let commandTimeout: Duration?

    private struct Slot {
        var connection: RedisConnection?
        /// Each script's digest, from `SCRIPT LOAD`.
        var digests: [String: String] = [:]
    }

    private let slot: Locked<Slot>

    /// Connects at once, so that an unreachable server is an error of the caller's `init`.
    init(_ endpoint: RedisEndpoint, commandTimeout: Duration? = .seconds(5)) throws(RedisFailure) {
        self.endpoint = endpoint
        self.commandTimeout = commandTimeout
        let connection = try RedisConnection(endpoint, commandTimeout: commandTimeout)
        slot = Locked(Slot(connection: connection))
    }

    func call(_ arguments: [String]) throws(RedisFailure) -> RedisReply {
        try withConnection { connection throws(RedisFailure) in try connection.call(arguments) }
    }

    func pipeline(_ commands: [[String]]) throws(RedisFailure) -> [RedisReply] {
        try withConnection { connection throws(RedisFailure) in try connection.pipeline(commands) }
    }

    /// Runs `script` with `keys` and `arguments`: one round trip, atomic on the server.
    func run(_ script: RedisScript, keys: [String], arguments: [String]) throws(RedisFailure) -> RedisReply {
        let reply = try slot.withLock { (s: inout Slot) throws(RedisFailure) -> RedisReply in
            try Self.retryingOnce(&s, endpoint, commandTimeout) { (s: inout Slot, c: RedisConnection) throws(RedisFailure) in
                try Self.evaluate(script, keys, arguments, &s, c)
            }
        }
        if case .error(let why) = reply { throw .server(why) }
        return reply
    }

    /// Runs `script` once per argument list, pipelined: one round trip for the lot.
    func runMany(_ script: RedisScript, keys: [String], arguments: [[String]]) throws(RedisFailure) -> [RedisReply] {
        try slot.withLock { (s: inout Slot) throws(RedisFailure) -> [RedisReply] in
            try Self.retryingOnce(&s, endpoint, commandTimeout) { (s: inout Slot, c: RedisConnection) throws(RedisFailure) in
                let digest = try Self.digest(script, &s, c)
                let commands = arguments.map { ["EVALSHA", digest, String(keys.count)] + keys + $0 }
                return try c.pipeline(commands)
            }
        }
    }

    private func withConnection<T: Sendable>(_ body: (RedisConnection) throws(RedisFailure) -> T) throws(RedisFailure) -> T {
        try slot.withLock { (s: inout Slot) throws(RedisFailure) -> T in
            try Self.retryingOnce(&s, endpoint, commandTimeout) { (_: inout Slot, c: RedisConnection) throws(RedisFailure) in
                try body(c)
            }
        }
    }

    private static func retryingOnce<T: Sendable>(
        _ s: inout Slot, _ endpoint: RedisEndpoint, _ timeout: Duration?,
        _ body: (inout Slot, RedisConnection) throws(RedisFailure) -> T
    ) throws(RedisFailure) -> T {
        for attempt in 0..<2 {
            let connection: RedisConnection
            if let open = s.connection, open.isOpen {
                connection = open
            } else {
                s.connection = nil
                connection = try RedisConnection(endpoint, timeout: .seconds(1), commandTimeout: timeout)
                s.connection = connection
            }
            do {
                return try body(&s, connection)
            } catch {
                s.connection = nil
                guard attempt == 0, error.connectionClosed else { throw error }
            }
        }
        throw .unreachable("\(endpoint): closed twice")
    }

    private static func evaluate(
        _ script: RedisScript, _ keys: [String], _ arguments: [String], _ s: inout Slot, _ c: RedisConnection
    ) throws(RedisFailure) -> RedisReply {
        let digest = try digest(script, &s, c)
        let reply = try c.call(["EVALSHA", digest, String(keys.count)] + keys + arguments)
        if case .error(let why) = reply, why.hasPrefix("NOSCRIPT") {
            // The server restarted and lost its script cache: load it again.
            s.digests[script.name] = nil
            return try c.call(["EVALSHA", try Self.digest(script, &s, c), String(keys.count)] + keys + arguments)
        }
        return reply
    }

    private static func digest(_ script: RedisScript, _ s: inout Slot, _ c: RedisConnection) throws(RedisFailure) -> String {
        if let known = s.digests[script.name] { return known }
        let reply = try c.call(["SCRIPT", "LOAD", script.source])
        guard case .string(let digest) = reply else {
            throw .server("SCRIPT LOAD \(script.name): \(reply)")
        }
        s.digests[script.name] = digest
        return digest
    }
}
#endif
