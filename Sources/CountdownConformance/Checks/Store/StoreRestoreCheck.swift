import Countdown
import CountdownSupport
import Foundation

/// The `store.restore` check: a scheduler shut down and another restored from its file (a
/// relaunch) brings back every running countdown on its deadline and every paused one paused;
/// one whose deadline passed meanwhile is reported expired, once: the launch after that does not
/// report it again.
enum StoreRestoreCheck {
    static let check = ConformanceCheck(
        "store.restore", .contract,
        "a relaunch restores running countdowns on their deadline and paused ones paused; one that ran out meanwhile is reported expired, once", body: run)

    static let running: UInt64 = 1_500_000_000

    static func run(_ c: CheckContext) throws {
        let folder = try StoreFolder()
        defer { folder.remove() }
        let path = folder.path("store")
        guard let (first, keyed, _) = try StoreFolder.restored(c, tick: .milliseconds(50), from: path) else { return }
        let startedAt = first.now()
        _ = try keyed.start(key: "run", duration: .nanoseconds(Int64(running))) { _ in }
        let startReturned = first.now()  // its deadline is at most this + 1.5 s
        _ = try keyed.start(key: "paused", duration: .seconds(5)) { _ in }
        c.expect(keyed.pause(key: "paused"), "pause of a running countdown answered false")
        _ = try keyed.start(key: "gone", duration: .milliseconds(100)) { _ in }
        keyed.shutdown()  // leaves the store as it is: the next launch finds all three
        first.settle(.milliseconds(300))  // "gone" runs out while nothing runs

        let restoredAt = first.now()  // the time left is read after this
        guard let (second, relaunched, restoration) = try StoreFolder.restored(c, tick: .milliseconds(50), from: path, at: restoredAt) else { return }
        // "run": back with at most the time to its deadline, and finished never before it.
        if let told = restoration.running["run"] {
            let left = Int64(startReturned + running) - Int64(restoredAt)
            c.expect(Int64(nanoseconds(told)) <= left + Int64(c.granularity),
                     "run: restored with \(told) left, more than the \(DurationText.nanoseconds(Double(left))) to its deadline")
            let log = second.recorder()
            _ = relaunched.attach(key: "run", observer: log.observer)
            if c.expect(log.waitForFinish(), "run: restored, attached, and not heard to finish within 10 s"), let finish = log.finishes.first {
                c.expect(finish.at + c.granularity >= startedAt + running,
                         "run: the restored countdown finished \(DurationText.nanoseconds(Double(startedAt + running - finish.at))) before its deadline")
            }
        } else if restoredAt < startedAt + running {
            c.fail("run: a running countdown was not restored (the restoration: \(StoreFolder.mentions("run", in: restoration)))")
        } else {
            c.inconclusive("the relaunch came \(DurationText.nanoseconds(Double(restoredAt - startedAt))) after the start: past the 1.5 s countdown (a loaded machine)")
        }
        if let frozen = restoration.paused["paused"] {
            c.expect(frozen <= .seconds(5) && frozen > .seconds(4), "paused: restored paused with \(frozen) left, not its frozen time")
            c.expect(relaunched.remaining(key: "paused") != nil, "paused: restored, and remaining(key:) is nil")
        } else {
            c.fail("paused: a paused countdown was not restored paused (the restoration: \(StoreFolder.mentions("paused", in: restoration)))")
        }
        let gone = StoreFolder.mentions("gone", in: restoration)
        c.expect(gone == ["expired"], "gone: ran out while nothing ran, and the relaunch named it \(gone), not expired once")
        relaunched.shutdown()

        // The launch after: the expired one was reported once, and is not again.
        guard let (_, _, again) = try StoreFolder.restored(c, tick: .milliseconds(50), from: path, at: second.now()) else { return }
        let goneAgain = StoreFolder.mentions("gone", in: again)
        c.expect(goneAgain.isEmpty, "gone: reported expired at one launch, and the next launch named it again: \(goneAgain)")
        c.expect(again.paused["paused"] != nil, "paused: not paused at the second relaunch (the restoration: \(StoreFolder.mentions("paused", in: again)))")
        c.figure("relaunched \(DurationText.nanoseconds(Double(restoredAt - startedAt))) after the starts: running \(restoration.running.count), paused \(restoration.paused.count), expired \(restoration.expired.count)")
    }
}
