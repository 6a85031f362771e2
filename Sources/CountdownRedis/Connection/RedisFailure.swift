#if Redis
import Countdown
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a call to Redis failed.
enum RedisFailure: Error, Sendable, CustomStringConvertible {
    /// No connection could be made, or it broke or timed out mid-call: whether the server ran
    /// what was sent is unknown, and it may be sent again on a new connection (every call the
    /// strategies make is safe to send twice).
    case connection(UnavailableReason, String)
    /// The server answered with an error.
    case server(String)

    var description: String {
        switch self {
        case .connection(let reason, let text): "Redis could not be reached (\(reason.rawValue)): \(text)"
        case .server(let text): "Redis answered an error: \(text)"
        }
    }

    /// The contract's error: a call that could not be carried out, and why.
    var countdownError: CountdownError {
        switch self {
        case .connection(let reason, let text): .unavailable(reason, text)
        case .server(let text) where text.hasPrefix("OOM"):
            .unavailable(
                .outOfMemory,
                "Redis is full: its memory is at maxmemory and its policy evicts nothing, so it refuses writes until memory is freed or maxmemory is raised (it said: \(text))")
        case .server(let text): .unavailable(Self.reason(ofServerError: text), text)
        }
    }

    /// Whether sending the call again on a new connection may succeed.
    var isConnection: Bool {
        if case .connection = self { true } else { false }
    }

    /// The server is starting and loading its data (`LOADING`), is busy with a long script
    /// (`BUSY`), or is a cluster's node whose cluster is electing a new master (`CLUSTERDOWN`) or
    /// whose slot is being moved (`TRYAGAIN`, `ASK`): it will answer once it is done, so the call
    /// waits and is sent again. An `ASK` is waited out, not followed: a script names its
    /// shard's tag, a key that never exists, so the node moving the slot sends every script to
    /// the importing node, where the shard's keys not yet moved would be missing; once the slot
    /// has moved, `MOVED` sends the call where all of them are.
    var isTransient: Bool {
        guard case .server(let text) = self else { return false }
        return text.hasPrefix("LOADING") || text.hasPrefix("BUSY") || text.hasPrefix("TRYAGAIN") || text.hasPrefix("CLUSTERDOWN")
            || text.hasPrefix("ASK ")
    }

    static func reason(ofServerError text: String) -> UnavailableReason {
        for prefix in ["NOAUTH", "WRONGPASS", "NOPERM", "ERR AUTH", "ERR invalid password", "ERR Client sent AUTH"]
        where text.hasPrefix(prefix) {
            return .authentication
        }
        // A command of a script refused by the user's ACL, where no check of the script's own
        // came first (Redis names the script's line, not the command).
        if text.contains("can't run this command") { return .authentication }
        return .server
    }

    /// A connection-level failure as hiredis reported it: its error code, the errno it saw
    /// (read at once, before anything else can change it), and its text.
    static func connection(hiredisError code: Int32, errno number: Int32, text: String) -> RedisFailure {
        .connection(reason(hiredisError: code, errno: number, text: text), text)
    }

    private static func reason(hiredisError code: Int32, errno number: Int32, text: String) -> UnavailableReason {
        switch code {
        case 3: return .reset  // REDIS_ERR_EOF: the server (or something between) closed the connection
        case 4: return .protocol  // REDIS_ERR_PROTOCOL
        case 6: return .timeout  // REDIS_ERR_TIMEOUT (hiredis 1.x)
        default: break
        }
        switch number {
        case ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL: return .refused
        case ECONNRESET, EPIPE, ECONNABORTED, ENOTCONN: return .reset
        case EAGAIN, ETIMEDOUT, EINPROGRESS: return .timeout
        default: break
        }
        // hiredis 0.14 keeps strerror's text but not always errno: read the text.
        let lower = text.lowercased()
        if lower.contains("refused") || lower.contains("not known") || lower.contains("resolve") { return .refused }
        if lower.contains("timed out") || lower.contains("temporarily unavailable") { return .timeout }
        return .reset
    }
}
#endif
