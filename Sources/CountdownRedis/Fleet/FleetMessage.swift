#if Redis
/// What one member of a fleet tells another about a countdown whose observer the other holds,
/// as the scripts write it (an inbox entry, or a message published on the namespace's channel):
/// a kind letter, numbers, the observer's token, then the key (last, so that it may hold
/// spaces). A pause and a resume carry the countdown's change number (its pauses and resumes
/// so far): messages travel on another connection than a member's own answers, so a pause
/// made here may be answered before another member's earlier resume is read, and only the
/// number tells which came last. Every message about a countdown names the observer it is addressed to, so that a
/// member applies it to that observer only, and keeps it while the call that makes that
/// observer is still on its way (``ObserverRegistry``).
enum FleetMessage: Equatable, Sendable {
    /// `f g token key`: claimed by another member; its observer here hears the finish.
    case finished(generation: Int64, token: String)
    /// `x g token key`: cancelled by another member.
    case cancelled(generation: Int64, token: String)
    /// `l g token key`: another observer attached: this one hears nothing more.
    case replaced(generation: Int64, token: String)
    /// `p g change remaining token key`: paused by another member, `remaining` µs left.
    case paused(generation: Int64, change: Int64, remaining: Int64, token: String)
    /// `r g change deadline token key`: resumed by another member, due at `deadline` (µs,
    /// server clock).
    case resumed(generation: Int64, change: Int64, deadline: Int64, token: String)
    /// `w deadline`: an earlier deadline than any before was added: claim then.
    case wake(deadline: Int64)
    /// `q`: this member shuts down; its reader stops.
    case quit

    /// Parses a message; nil for anything else (a newer member's message: ignored).
    init?(_ text: String) {
        // The key is the last field and may hold spaces: split no further than the fields before it.
        let kind = text.prefix { $0 != " " }
        let fields = text.split(separator: " ", maxSplits: kind == "p" || kind == "r" ? 5 : 4, omittingEmptySubsequences: false)
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
            guard let generation = number(1), let change = number(2), let value = number(3),
                  let token = word(4) else { return nil }
            self = kind == "p" ? .paused(generation: generation, change: change, remaining: value, token: token)
                : .resumed(generation: generation, change: change, deadline: value, token: token)
        default: return nil
        }
    }
}
#endif
