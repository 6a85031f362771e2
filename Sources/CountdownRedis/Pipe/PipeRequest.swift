#if Redis
/// One request of a ``RedisPipe``: a command, or a script run by its digest (by its source
/// after `NOSCRIPT`).
struct PipeRequest: Sendable {
    enum Body: Sendable {
        case command([String])
        case script(RedisScript, keys: [String], arguments: [String])
    }

    /// How requests of one script that wait together go as one call: the server's work per
    /// call (the script's call, its clock, its record) is then paid once for them all, as a
    /// batch of starts pays it (``ZSetEngine/startsPerScript``).
    struct Merging: Sendable {
        /// How many arguments, after the call record's, the merged requests share (the rest are
        /// their items, appended one request after another).
        let shared: Int
        /// The most requests one call takes.
        let most: Int
        /// The merged call's answer as each request's own, given how many there were; nil
        /// when it cannot be read so (each request then gets it whole, and fails on it).
        let split: @Sendable (RedisReply, Int) -> [RedisReply]?

        /// A merged answer {now, then each request's fields} as each one's {now, its fields}:
        /// `width` tells, from the first field of a request's answer, how many fields it has.
        static func split(_ reply: RedisReply, count: Int, width: (Int64?) -> Int?) -> [RedisReply]? {
            let fields = reply.elements
            guard let now = fields.first, now.int != nil else { return nil }
            var answers: [RedisReply] = []
            var index = 1
            for _ in 0..<count {
                guard index < fields.count, let size = width(fields[index].int), size > 0, index + size <= fields.count else { return nil }
                answers.append(.array([now] + fields[index..<index + size]))
                index += size
            }
            return index == fields.count ? answers : nil
        }
    }

    var body: Body
    var merging: Merging?

    static func command(_ arguments: [String]) -> PipeRequest { PipeRequest(body: .command(arguments)) }

    static func script(_ script: RedisScript, keys: [String], arguments: [String], merging: Merging? = nil) -> PipeRequest {
        PipeRequest(body: .script(script, keys: keys, arguments: arguments), merging: merging)
    }

    /// What requests that may go in one call share: the script, its keys and its shared
    /// arguments (numbered: after the call record's three, when recorded).
    struct MergeKey: Hashable {
        let script: String
        let keys: [String]
        let shared: ArraySlice<String>
    }

    /// This request's ``MergeKey`` (nil: it goes alone).
    var mergeKey: MergeKey? {
        guard let merging, case .script(let script, let keys, let arguments) = body else { return nil }
        let skip = script.recorded ? 3 : 0
        guard arguments.count >= skip + merging.shared else { return nil }
        return MergeKey(script: script.name, keys: keys, shared: arguments[skip..<skip + merging.shared])
    }

    /// `other`'s items after this request's own, in place (a call of 64 starts copied its
    /// arguments 64 times when each merge made a new array).
    mutating func append(_ other: PipeRequest) {
        guard let merging, case .script(let script, let keys, var arguments) = body,
              case .script(_, _, let otherArguments) = other.body else { return }
        body = .command([])  // lets go of the arguments, so that they grow in place
        arguments.append(contentsOf: otherArguments.dropFirst((script.recorded ? 3 : 0) + merging.shared))
        body = .script(script, keys: keys, arguments: arguments)
    }
}
#endif
