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
    private let stopped: @Sendable () -> Bool
    /// On purpose, for the suite's own tests (``FleetDefects/forgetsProcessingList``).
    private let forgets: Bool

    /// `link` must never resend (``RedisLink/Patience/within(_:)`` zero): a resent move would
    /// move the next messages and lose the answer of the first.
    init(
        link: RedisLink, box: String, processing: String, handle: @escaping @Sendable ([FleetMessage]) -> Void,
        stopped: @escaping @Sendable () -> Bool, defects: FleetDefects = []
    ) {
        forgets = defects.contains(.forgetsProcessingList)
        self.link = link
        self.box = box
        self.processing = processing
        self.handle = handle
        self.stopped = stopped
    }

    func start(name: String) {
        let thread = Thread { [self] in
            nameCurrentThread(name)
            run()
        }
        thread.start()
    }

    private func run() {
        var recovering = true
        var failures = 0
        while !stopped() {
            do {
                if recovering {
                    let left = try link.call(["LRANGE", processing, "0", "-1"]).elements.compactMap(\.text)
                    failures = 0
                    if !forgets { handle(left.compactMap(FleetMessage.init)) }
                    _ = try link.call(["DEL", processing])
                    recovering = false
                }
                let moved = try link.call(["BLMOVE", box, processing, "LEFT", "RIGHT", "1"])
                failures = 0
                guard case .string(let first) = moved else { continue }  // a second without a message
                let more = try link.run(ZSetScripts.moveInbox, keys: [box, processing], arguments: ["511"])
                handle(([first] + more.elements.compactMap(\.text)).compactMap(FleetMessage.init))
                _ = try link.call(["DEL", processing])
            } catch {
                // A connection that answered and then broke (a dropped answer, a reset) is made
                // again at once: a message waiting behind it must reach its observer within the
                // fleet's 100 ms. Only a server that answers nothing is asked again less and less
                // often, up to 100 ms apart (fleet.faults in CI: backing off after every failure,
                // replaced observers ticked up to 393 ms on).
                recovering = true
                failures += 1
                if failures > 1, !stopped() { usleep(UInt32(min(5_000 << min(failures - 2, 5), 100_000))) }
            }
        }
    }
}
#endif
