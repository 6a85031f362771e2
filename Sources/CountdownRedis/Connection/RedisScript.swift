#if Redis
/// A Lua script run by its digest, loaded again when the server no longer has it (restarted).
struct RedisScript: Sendable {
    let name: String
    let source: String
    /// Whether the script keeps its answer under the caller's call id (``CallRecord``): every
    /// script that changes something does, so that sending it again is answered the same.
    let recorded: Bool

    /// A script that changes something: its source is the body of ``CallRecord/wrap(_:expiry:)``.
    static func recorded(_ name: String, expiry: CallRecord.Expiry = .withTheMember, body: String) -> RedisScript {
        RedisScript(name: name, source: CallRecord.wrap(body, expiry: expiry), recorded: true)
    }

    /// A script that only reads.
    static func reading(_ name: String, source: String) -> RedisScript {
        RedisScript(name: name, source: source, recorded: false)
    }
}
#endif
