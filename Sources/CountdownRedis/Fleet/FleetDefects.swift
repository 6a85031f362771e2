#if Redis
/// Defects a fleet member can be made with on purpose, each one the conformance suite must
/// reject: this package's own tests build broken fleet backends from them (through
/// `@testable import`), and aim each at the check that must catch it. Empty in every scheduler
/// a user makes.
struct FleetDefects: OptionSet, Sendable {
    let rawValue: Int

    /// Notices from other members (a replacement, a cancel, a pause, a resume) are dropped:
    /// the observer ticks on to the old deadline, and is held for ever.
    static let ignoresOtherMembers = FleetDefects(rawValue: 1 << 0)
    /// A notice that comes before the answer it refers to is dropped, not kept: what the
    /// registry did before notices were addressed to tokens (an observer orphaned by a race).
    static let dropsNoticesBeforeAnswers = FleetDefects(rawValue: 1 << 1)
    /// A call sent again takes a new serial: the server runs it again instead of answering it
    /// the same (a claim sent again finds nothing; a cancel sent again answers false).
    static let newSerialOnResend = FleetDefects(rawValue: 1 << 2)
    /// After a broken connection the inbox reader drops its processing list instead of
    /// handling it: a message moved but not read is lost, as a plain blocking pop loses it.
    static let forgetsProcessingList = FleetDefects(rawValue: 1 << 3)
    /// The claimer claims only at deadlines of its own starts and resumes (no heartbeat, no
    /// wake-ups, not the earliest deadline a claim answers): a countdown whose member was
    /// killed is claimed only if another member's deadline comes after it.
    static let claimsOnlyItsOwn = FleetDefects(rawValue: 1 << 4)
    /// Other members' notices are dropped, as with ``ignoresOtherMembers``, but a cancel of this
    /// member's own that finds nothing ends the observer of its key here: a member that learns
    /// of another's cancel only when it asks itself (a check whose own call came between the
    /// other's cancel and its judgement would silence it, and pass it).
    static let silencesOnlyOnItsOwnCall = FleetDefects(rawValue: 1 << 5)
}
#endif
