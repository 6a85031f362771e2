#if Redis
/// What the sorted-set strategy does with a message its inbox reader took from this member's
/// inbox: what another member did to a countdown observed here, or a wake-up for the claimer.
enum ZSetInboxMessage {
    static func handle(_ message: FleetMessage, watch: LocalWatch, claimer: ZSetClaimer, clock: ServerClock, defects: FleetDefects) {
        if case .wake(let deadline) = message, !defects.contains(.claimsOnlyItsOwn) { claimer.claim(at: clock.local(deadline)) }
        guard let notice = FleetNotice(message, clock: clock) else { return }
        if !defects.isDisjoint(with: [.ignoresOtherMembers, .silencesOnlyOnItsOwnCall]), notice.kind != .finished { return }
        watch.receive(notice)
    }
}
#endif
