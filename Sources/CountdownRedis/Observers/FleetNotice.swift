#if Redis
/// What happened to a countdown whose observer this process holds, addressed to that
/// observer's token: from another member's message, or from this member's own call's answer
/// (a cancel, a pause or a resume made here reports the token the server named).
struct FleetNotice: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// Its finish, claimed here or elsewhere.
        case finished
        /// Cancelled.
        case cancelled
        /// Another observer attached.
        case replaced
        /// Paused with `remaining` nanoseconds left; `change` numbers the countdown's pauses and
        /// resumes, as the server counted them.
        case paused(remaining: Int64, change: Int64)
        /// Resumed, due at `deadline` (a monotonic instant here); `change` as for a pause.
        case resumed(deadline: Int64, change: Int64)

        /// Whether it ends the observer it is addressed to.
        var ends: Bool {
            switch self {
            case .finished, .cancelled, .replaced: true
            case .paused, .resumed: false
            }
        }
    }

    let generation: Int64
    let token: String
    let kind: Kind
}
#endif

#if Redis
extension FleetNotice {
    /// What a message says about a token, with its deadline (if any) placed on this process's
    /// clock; nil for a message about no countdown (a wake-up, a quit).
    init?(_ message: FleetMessage, clock: ServerClock) {
        switch message {
        case .finished(let generation, let token): self.init(generation: generation, token: token, kind: .finished)
        case .cancelled(let generation, let token): self.init(generation: generation, token: token, kind: .cancelled)
        case .replaced(let generation, let token): self.init(generation: generation, token: token, kind: .replaced)
        case .paused(let generation, let change, let remaining, let token):
            self.init(generation: generation, token: token, kind: .paused(remaining: remaining * 1000, change: change))
        case .resumed(let generation, let change, let deadline, let token):
            self.init(generation: generation, token: token, kind: .resumed(deadline: clock.local(deadline), change: change))
        case .wake, .quit: return nil
        }
    }
}
#endif
