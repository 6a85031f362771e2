#if Redis
import CountdownSupport
import Foundation

/// Reads a member's inbox as Redis' reliable-queue pattern does: a blocking `BLMOVE` moves each
/// message into the member's processing list before it is handled, and the list is emptied
/// only once everything in it was handled. A connection that breaks between the move and the
/// answer (the answer lost with it) loses nothing: after any failure the reader handles what
/// the processing list holds, again, before it reads more. Handling is idempotent (a notice for
/// an observer already gone is dropped), so a message handled twice changes nothing.
final class InboxReader: Sendable {
    private let link: RedisLink
    private let box: String
    private let processing: String
    private let handle: @Sendable ([FleetMessage]) -> Void
    /// Told at each failure, with the instant of the last answer, and once everything missed
    /// has been read (``InboxHearing``).
    private let hearing: @Sendable (InboxHearing.Change) -> Void
    private let stopped: @Sendable () -> Bool
    /// Told each failure, with the command that met it (``BackgroundFailures``).
    private let failed: @Sendable (RedisFailure, String) -> Void
    /// On purpose, for the suite's own tests (``FleetDefects/forgetsProcessingList``).
    private let forgets: Bool

    /// `link` must never resend (``RedisLink/Patience/within(_:)`` zero): a resent move would
    /// move the next messages and lose the answer of the first.
    init(
        link: RedisLink, box: String, processing: String, handle: @escaping @Sendable ([FleetMessage]) -> Void,
        hearing: @escaping @Sendable (InboxHearing.Change) -> Void = { _ in }, stopped: @escaping @Sendable () -> Bool,
        failed: @escaping @Sendable (RedisFailure, String) -> Void = { _, _ in }, defects: FleetDefects = []
    ) {
        self.failed = failed
        forgets = defects.contains(.forgetsProcessingList)
        self.link = link
        self.box = box
        self.processing = processing
        self.handle = handle
        self.hearing = hearing
        self.stopped = stopped
    }

    func start(name: String) {
        let thread = Thread { [self] in
            nameCurrentThread(name)
            run()
        }
        thread.start()
    }

    /// The reply, or the server's refusal thrown: an error answered is no message (a refused
    /// `BLMOVE` read as "a second without a message" was retried at once, for ever).
    @discardableResult
    private static func answered(_ reply: RedisReply) throws(RedisFailure) -> RedisReply {
        if case .error(let text) = reply { throw .server(text) }
        return reply
    }

    private func run() {
        var recovering = true
        var failures = 0
        var madeAtFailure = link.connectionsMade
        var step = "LRANGE"
        // When the reader was last answered: a notice pushed since may wait unheard when its
        // connection breaks (a blocking move waits up to a second before it is answered).
        var answeredAt = Int64(SystemClocks.monotonic())
        /// A call's reply, its instant kept as the last answer's; the server's refusal thrown.
        func ask(_ call: () throws(RedisFailure) -> RedisReply) throws(RedisFailure) -> RedisReply {
            let reply = try Self.answered(call())
            answeredAt = Int64(SystemClocks.monotonic())
            return reply
        }
        while !stopped() {
            do {
                if recovering {
                    // What the processing list holds (moved, perhaps never handled), then what
                    // waits in the inbox, moved without blocking: once both are handled, every
                    // message sent before the script ran has been heard (``InboxHearing``).
                    step = "LRANGE"
                    let left = try ask { () throws(RedisFailure) in try link.call(["LRANGE", processing, "0", "-1"]) }.elements.compactMap(\.text)
                    failures = 0  // the connection answers: a break before it is not backed off
                    if !forgets { handle(left.compactMap(FleetMessage.init)) }
                    step = "move-inbox script"
                    let waiting = try ask { () throws(RedisFailure) in try link.run(ZSetScripts.moveInbox, keys: [box, processing], arguments: ["511"]) }
                    handle(waiting.elements.compactMap(\.text).compactMap(FleetMessage.init))
                    hearing(.regained)
                    step = "DEL"
                    _ = try ask { () throws(RedisFailure) in try link.call(["DEL", processing]) }
                    recovering = false
                }
                step = "BLMOVE"
                let moved = try ask { () throws(RedisFailure) in try link.call(["BLMOVE", box, processing, "LEFT", "RIGHT", "1"]) }
                failures = 0
                guard case .string(let first) = moved else { continue }  // a second without a message
                // Handled at once, before the round trip that moves the rest: a notice is heard
                // one round trip sooner (CI's fleet --quick, no faults, a loaded machine: ticks
                // began 105-165 ms after the call that ended their observers).
                handle(FleetMessage(first).map { [$0] } ?? [])
                step = "move-inbox script"
                let more = try ask { () throws(RedisFailure) in try link.run(ZSetScripts.moveInbox, keys: [box, processing], arguments: ["511"]) }
                handle(more.elements.compactMap(\.text).compactMap(FleetMessage.init))
                step = "DEL"
                _ = try ask { () throws(RedisFailure) in try link.call(["DEL", processing]) }
            } catch {
                if !stopped() { failed(error, step) }
                hearing(.lost(since: answeredAt))
                // A connection that answered and then broke (a dropped answer, a reset) is made
                // again at once, up to four times in a row: a message waiting behind it must
                // reach its observer within the fleet's 100 ms. A connection made since the last
                // failure answered (its handshake), so the server is there. fleet.faults in CI:
                // backing off after every failure, replaced observers ticked up to 393 ms on;
                // after every second one, with four answers dropped in a row (one in eleven each)
                // on a loaded machine, 160-200 ms on. More failures in a row, or a server that
                // answers nothing, are asked again less and less often, up to 100 ms apart (a
                // server that answers the handshake and breaks every read is not hammered).
                recovering = true
                let made = link.connectionsMade
                let answered = made != madeAtFailure
                madeAtFailure = made
                failures += 1
                if stopped() { continue }
                let free = answered ? 4 : 1
                if case .server = error, !error.isTransient {
                    // A refusal (a permission missing, a full server), not a server loading or a
                    // slot moving: it will answer the same for a while. Ten tries a second at
                    // most, from the first (a refused BLMOVE, read as a second without a message,
                    // was sent again at once: 62 062 times in 2.5 s).
                    usleep(100_000)
                } else if failures > free {
                    usleep(UInt32(min(5_000 << min(failures - free - 1, 5), 100_000)))
                }
            }
        }
    }
}
#endif
