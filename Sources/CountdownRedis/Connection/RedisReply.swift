#if Redis
/// One reply of Redis' protocol (RESP2), copied out of hiredis' reply tree.
enum RedisReply: Sendable, Equatable {
    case status(String)
    case error(String)
    case integer(Int64)
    case string(String)
    case null
    case array([RedisReply])

    /// The integer, or a string that holds one (Lua numbers come back as integers).
    var int: Int64? {
        switch self {
        case .integer(let value): value
        case .string(let text): Int64(text)
        default: nil
        }
    }

    var text: String? {
        switch self {
        case .string(let text), .status(let text): text
        case .integer(let value): String(value)
        default: nil
        }
    }

    var elements: [RedisReply] {
        if case .array(let elements) = self { elements } else { [] }
    }
}
#endif
