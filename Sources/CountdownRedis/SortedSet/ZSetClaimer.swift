#if Redis
import Countdown
import CountdownSupport

/// The sorted-set strategy's claimer: a thread of its own (a claim that waits on Redis never
/// stalls the ticks) that sleeps until the earliest deadline this member knows, or a heartbeat,
/// and claims what is due with one script. A claim whose answer was lost is sent again with the
/// same serial until it is answered (``RedisLink/Patience/untilStopped(_:)``): the server
/// answers it with the same countdowns, so the finishes it claimed for this member's own
/// observers are heard, not lost with the connection.
final class ZSetClaimer: Sendable {
    /// How many countdowns one claim takes at most (a script's `unpack` handles a few thousand).
    static let batch = 1000

    /// How often a claimer claims when it knows of nothing due: each claim answers the earliest
    /// deadline left, so a member learns of every deadline further away than this without being
    /// woken (``ZSetScripts/wakeIfEarliest(_:_:)``).
    static let heartbeat: Duration = .seconds(1)

    private struct State {
        /// When to claim next (`Int64.max`: nothing known).
        var claimAt: Int64 = .max
        var heartbeatAt: Int64 = 0
        /// When Redis is next asked about the overdue countdowns observed here.
        var lostCheckAt: Int64 = 0
        /// The instant the thread sleeps until, so that only an earlier one wakes it.
        var sleepingUntil: Int64 = 0
        var stopped = false
    }

    private let link: RedisLink
    private let prefix: String
    private let tolerance: Int64
    private let heartbeat: Int64
    private let clock: ServerClock
    /// Each finish claimed for an observer of this member: its generation and token.
    private let claimed: @Sendable (Int64, String) -> Void
    /// Told each time a claim fails (``BackgroundFailures``).
    private let failed: @Sendable (RedisFailure) -> Void
    /// On purpose, for the suite's own tests (``FleetDefects/claimsOnlyItsOwn``): the earliest
    /// deadline a claim answers is not looked at.
    private let followsTheFleet: Bool
    private let state = Locked(State())
    /// Ends the observers here whose countdown Redis lost, at most once a heartbeat.
    private let lostCheck: ZSetLostCheck?
    private let ticker = Locked<FleetTicker?>(nil)

    /// `heartbeat`: how often it claims when it knows of nothing due (nil: never, on purpose:
    /// ``FleetDefects/claimsOnlyItsOwn``).
    init(
        link: RedisLink, prefix: String, tolerance: Duration, heartbeat: Duration? = ZSetClaimer.heartbeat, clock: ServerClock,
        lostCheck: ZSetLostCheck? = nil, failed: @escaping @Sendable (RedisFailure) -> Void = { _ in },
        claimed: @escaping @Sendable (Int64, String) -> Void
    ) {
        self.lostCheck = lostCheck
        self.failed = failed
        self.link = link
        self.prefix = prefix
        self.tolerance = tolerance.nanoseconds
        self.heartbeat = heartbeat?.nanoseconds ?? .max
        followsTheFleet = heartbeat != nil
        self.clock = clock
        self.claimed = claimed
    }

    /// Starts the thread.
    func start(name: String) {
        ticker.withLock { $0 = FleetTicker(name: name) { [self] now in step(now) } }
    }

    /// Something is due at `instant`: claim then (or earlier, if it already would), plus the
    /// tolerance, by which a finish may be late by design so that close ones share a claim.
    func claim(at instant: Int64) {
        let wake = state.withLock { s -> Bool in
            let at = instant > Int64.max - tolerance ? instant : instant + tolerance
            guard at < s.claimAt else { return false }
            s.claimAt = at
            return at < s.sleepingUntil
        }
        if wake { ticker.withLock { $0 }?.wake() }
    }

    func stop() {
        state.withLock { $0.stopped = true }
        ticker.withLock { $0 }?.wake()
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    private func step(_ now: Int64) -> FleetTicker.Next {
        let due = state.withLock { s -> FleetTicker.Next? in
            if s.stopped { return .stop }
            guard now >= s.claimAt || now >= s.heartbeatAt else {
                s.sleepingUntil = min(s.claimAt, s.heartbeatAt)
                return .at(s.sleepingUntil)
            }
            s.claimAt = .max
            s.heartbeatAt = heartbeat == .max ? .max : now + heartbeat
            s.sleepingUntil = 0  // claiming: an earlier deadline is read when it is done
            return nil
        }
        if let due { return due }
        guard claimDue() else { return .stop }
        // After the claims: a finish claimed here has been heard, one claimed elsewhere is in
        // the inbox the check reads.
        let checking = lostCheck != nil && state.withLock { s -> Bool in
            guard now >= s.lostCheckAt else { return false }
            s.lostCheckAt = now + Self.heartbeat.nanoseconds
            return true
        }
        if checking, let lostCheck {
            do {
                try lostCheck.run(on: link)
            } catch {
                if !isStopped { failed(error) }
            }
        }
        return .at(0)
    }

    /// Claims until less than a batch is due; false once stopped.
    private func claimDue() -> Bool {
        while true {
            let reply: RedisReply
            do {
                reply = try link.run(ZSetScripts.claim, keys: [prefix], arguments: [String(Self.batch)])
            } catch {
                // Stopped, or the server refused the script: look again in 100 ms.
                if isStopped { return false }
                failed(error)
                claim(at: LocalWatch.now() + 100_000_000)
                return true
            }
            let received = LocalWatch.now()
            let fields = reply.elements
            guard fields.count == 4, let now = fields[0].int, let count = fields[2].int else { return true }
            clock.update(serverNow: now, receivedAt: received)
            let here = fields[3].elements
            for index in stride(from: 0, to: here.count - 1, by: 2) {
                if let generation = here[index].int, let token = here[index + 1].text { claimed(generation, token) }
            }
            if count >= Self.batch { continue }
            if followsTheFleet, let earliest = fields[1].text.flatMap(Int64.init), earliest >= 0 {
                claim(at: ServerClock.local(earliest, serverNow: now, receivedAt: received))
            }
            return true
        }
    }
}
#endif
