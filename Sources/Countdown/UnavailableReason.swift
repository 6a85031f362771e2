/// Why a shared store (a Redis server, for a fleet) could not answer a call: what
/// ``CountdownError/unavailable(_:_:)`` carries beside the server's or the system's text, so
/// that a caller can tell a server that is down from one that refuses it.
public enum UnavailableReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// Nothing listens there (the connection was refused), or the address does not resolve.
    case refused
    /// The connection broke: closed or reset by the server, a proxy or the network.
    case reset
    /// No answer within the time allowed: to connect, or to a call.
    case timeout
    /// The server wants credentials that were not given, or refuses the ones that were
    /// (`NOAUTH`, `WRONGPASS`, `NOPERM`).
    case authentication
    /// The answer was not one the backend understands: another program on the port, or a
    /// server too old for what the backend sends.
    case `protocol`
    /// The server is full: its memory is at its limit (Redis' `maxmemory`) and it evicts
    /// nothing to make room (`noeviction`), so it refuses every write until memory is freed or
    /// the limit raised. Reads still answer.
    case outOfMemory
    /// The server answered with an error of its own (a read-only replica, a script that failed).
    case server
    /// The server made the change, but fewer of its replicas than asked acknowledged it in
    /// time (Redis' `WAIT`): a failover now may lose it. Sending the call again is safe.
    case notReplicated
}
