#if Redis
/// What one member of a fleet tells another about a countdown the other observes, as the
/// scripts write it into the other's inbox: a kind letter, numbers, then the key (last, so that
/// it may hold spaces).
enum FleetMessage: Equatable, Sendable {
    /// `f g owner key`: claimed by another member; its observer here (`owner`) hears the finish.
    case finished(generation: Int64, owner: String)
    /// `x g key`: cancelled by another member.
    case cancelled(generation: Int64)
    /// `l g a key`: another member attached an observer (the countdown's `a`-th attach); one here
    /// that attached before it hears nothing more.
    case observerLost(generation: Int64, attachSerial: Int64)
    /// `p g remaining key`: paused by another member, `remaining` µs left.
    case paused(generation: Int64, remaining: Int64)
    /// `r g deadline key`: resumed by another member, due at `deadline` (µs, server clock).
    case resumed(generation: Int64, deadline: Int64)
    /// `w deadline`: an earlier deadline than any before was added: claim then.
    case wake(deadline: Int64)
    /// `q`: this member shuts down; its listener stops.
    case quit

    /// Parses an inbox entry; nil for anything else (a newer member's message: ignored).
    init?(_ text: String) {
        var fields = text.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard let kind = fields.first else { return nil }
        fields.removeFirst()
        let numbers = fields.prefix(2).map { Int64($0) }
        switch kind {
        case "q": self = .quit
        case "w":
            guard let deadline = numbers.first ?? nil else { return nil }
            self = .wake(deadline: deadline)
        case "f":
            guard fields.count >= 2, let generation = Int64(fields[0]) else { return nil }
            self = .finished(generation: generation, owner: String(fields[1]))
        case "x":
            guard let generation = numbers.first ?? nil else { return nil }
            self = .cancelled(generation: generation)
        case "p", "r", "l":
            guard numbers.count == 2, let generation = numbers[0], let value = numbers[1] else { return nil }
            self = kind == "p" ? .paused(generation: generation, remaining: value)
                : kind == "r" ? .resumed(generation: generation, deadline: value)
                : .observerLost(generation: generation, attachSerial: value)
        default: return nil
        }
    }
}
#endif
