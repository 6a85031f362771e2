#if Redis
/// What one member of a fleet tells another about a countdown whose observer the other holds,
/// as the scripts write it (an inbox entry, or a message published on the namespace's channel):
/// a kind letter, numbers, the observer's token, then the key (last, so that it may hold
/// spaces). Every message about a countdown names the observer it is addressed to, so that a
/// member applies it to that observer only, and keeps it while the call that makes that
/// observer is still on its way (``ObserverRegistry``).
enum FleetMessage: Equatable, Sendable {
    /// `f g token key`: claimed by another member; its observer here hears the finish.
    case finished(generation: Int64, token: String)
    /// `x g token key`: cancelled by another member.
    case cancelled(generation: Int64, token: String)
    /// `l g token key`: another observer attached: this one hears nothing more.
    case replaced(generation: Int64, token: String)
    /// `p g remaining token key`: paused by another member, `remaining` µs left.
    case paused(generation: Int64, remaining: Int64, token: String)
    /// `r g deadline token key`: resumed by another member, due at `deadline` (µs, server clock).
    case resumed(generation: Int64, deadline: Int64, token: String)
    /// `w deadline`: an earlier deadline than any before was added: claim then.
    case wake(deadline: Int64)
    /// `q`: this member shuts down; its reader stops.
    case quit

    /// Parses a message; nil for anything else (a newer member's message: ignored).
    init?(_ text: String) {
        let fields = text.split(separator: " ", maxSplits: 4, omittingEmptySubsequences: false)
        guard let kind = fields.first else { return nil }
        func number(_ index: Int) -> Int64? { index < fields.count ? Int64(fields[index]) : nil }
        func word(_ index: Int) -> String? { index < fields.count && !fields[index].isEmpty ? String(fields[index]) : nil }
        switch kind {
        case "q": self = .quit
        case "w":
            guard let deadline = number(1) else { return nil }
            self = .wake(deadline: deadline)
        case "f", "x", "l":
            guard let generation = number(1), let token = word(2) else { return nil }
            self = kind == "f" ? .finished(generation: generation, token: token)
                : kind == "x" ? .cancelled(generation: generation, token: token)
                : .replaced(generation: generation, token: token)
        case "p", "r":
            guard let generation = number(1), let value = number(2), let token = word(3) else { return nil }
            self = kind == "p" ? .paused(generation: generation, remaining: value, token: token)
                : .resumed(generation: generation, deadline: value, token: token)
        default: return nil
        }
    }
}
#endif
