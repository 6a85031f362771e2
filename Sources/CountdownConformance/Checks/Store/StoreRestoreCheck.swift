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
        _ = try keyed.start(key: "run", duration: .nanoseconds(Int64(running)), observer: first.ignoring("start"))
        let startReturned = first.now()  // its deadline is at most this + 1.5 s
        _ = try keyed.start(key: "paused", duration: .seconds(5), observer: first.ignoring("start"))
        c.expect(keyed.pause(key: "paused"), "pause of a running countdown answered false")
        let goneLog = first.recorder()
        let goneAsked = first.now()
        _ = try keyed.start(key: "gone", duration: .milliseconds(100), observer: goneLog.observer(for: "start"))
        // The scheduler's own deadline for "run" once the file holds every change: the latest
        // the file may record. (A tick counter's deadline moves later when a fire comes late,
        // never earlier: a deadline read after the write is at or after the written one.)
        keyed.waitUntilStored()
        let believed = keyed.remaining(key: "run").map { first.now() + nanoseconds($0) }
        let shutDownAt = first.now()
        keyed.shutdown()  // leaves the store as it is: the next launch finds all three
        let goneFinished = !goneLog.finishes.isEmpty
        first.settle(.milliseconds(300))  // "gone" runs out while nothing runs

        // What the file says of "run": its deadline, as the relaunch must find it. Judged
        // against it, an early restore shows whatever the machine's delays (a start that took
        // long, a delivery that came late), which moved bounds read off the check's clock. On
        // the check's clock it is a range (``StoreFolder/deadline(of:in:on:)``): each judgement
        // takes the bound that gives the backend the doubt.
        let recordedRange = folder.deadline(of: "run", in: "store", on: first)
        let recorded = recordedRange?.lowerBound
        if let recordedRange {
            c.expect(recordedRange.upperBound + c.granularity >= startedAt + running,
                     "run: the file's deadline is \(DurationText.nanoseconds(Double(Int64(recordedRange.upperBound) - Int64(startedAt)))) after the start began: before its 1.5 s")
            if let believed {
                c.expect(recordedRange.lowerBound <= believed + c.granularity,
                         "run: the file's deadline is \(DurationText.nanoseconds(Double(Int64(recordedRange.lowerBound) - Int64(believed)))) later than the scheduler's own once written")
            }
        }

        let restoredAt = first.now()  // the time left is read after this
        guard let (second, relaunched, restoration) = try StoreFolder.restored(c, tick: .milliseconds(50), from: path, at: restoredAt) else { return }
        // "run": back with at most the time to its deadline, and finished never before it.
        if let told = restoration.running["run"] {
            let deadline = recorded ?? startReturned + running
            let left = Int64(recordedRange?.upperBound ?? deadline) - Int64(restoredAt)
            c.expect(Int64(nanoseconds(told)) <= left + Int64(c.granularity),
                     "run: restored with \(told) left, more than the \(DurationText.nanoseconds(Double(left))) to its deadline\(recorded == nil ? "" : " as the file recorded it")")
            if recorded != nil { neverEarly(relaunched, deadline: deadline, on: second, in: c) }
            let log = second.recorder()
            _ = relaunched.attach(key: "run", observer: log.observer(for: "attach"))
            if c.expect(log.waitForFinish(), "run: restored, attached, and not heard to finish within 10 s"), let finish = log.finishes.first {
                c.expect(finish.at + c.granularity >= (recorded ?? startedAt + running),
                         "run: the restored countdown finished \(DurationText.nanoseconds(Double(Int64(recorded ?? startedAt + running) - Int64(finish.at)))) before its deadline\(recorded == nil ? "" : " as the file recorded it")")
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
        judgeGone(StoreFolder.mentions("gone", in: restoration), finished: goneFinished, dueBeforeShutdown: shutDownAt >= goneAsked + 100_000_000, in: c)
        relaunched.shutdown()

        // The launch after: the expired one was reported once, and is not again.
        guard let (_, _, again) = try StoreFolder.restored(c, tick: .milliseconds(50), from: path, at: second.now()) else { return }
        let goneAgain = StoreFolder.mentions("gone", in: again)
        c.expect(goneAgain.isEmpty, "gone: reported expired at one launch, and the next launch named it again: \(goneAgain)")
        c.expect(again.paused["paused"] != nil, "paused: not paused at the second relaunch (the restoration: \(StoreFolder.mentions("paused", in: again)))")
        c.figure("relaunched \(DurationText.nanoseconds(Double(restoredAt - startedAt))) after the starts: running \(restoration.running.count), paused \(restoration.paused.count), expired \(restoration.expired.count)")
    }

    /// "gone", as the relaunch names it, judged by what happened before the shutdown. It was meant
    /// to run out while nothing ran; on a loaded machine the shutdown can come after its 100 ms
    /// (CI-like campaign, `task`, 1 run of 11: "the relaunch named it [], not expired once"). Heard
    /// to finish, it is named nothing; due before the shutdown and not heard, nothing or expired
    /// (its fire may have come, its finish silenced by the shutdown); else expired, once.
    private static func judgeGone(_ gone: [String], finished: Bool, dueBeforeShutdown: Bool, in c: CheckContext) {
        if finished {
            c.expect(gone.isEmpty, "gone: finished before the shutdown, and the relaunch named it \(gone)")
        } else if dueBeforeShutdown {
            c.expect(gone.isEmpty || gone == ["expired"], "gone: due before the shutdown, not heard to finish, and the relaunch named it \(gone)")
        } else {
            c.expect(gone == ["expired"], "gone: ran out while nothing ran, and the relaunch named it \(gone), not expired once")
        }
    }

    /// remaining(key:) read 20 times: a restored countdown never has less left than its recorded
    /// deadline allows at the instant the read returned. A late delivery cannot hide an early
    /// deadline here, as it can in the finish's arrival; a read the machine delayed only loosens
    /// its own bound, and one prompt read is enough to show a deadline a millisecond early.
    private static func neverEarly(_ s: any CountdownScheduler, deadline: UInt64, on h: Harness, in c: CheckContext) {
        var shortest: (short: Int64, read: Duration)?
        for _ in 0..<20 {
            guard let read = s.remaining(key: "run") else { return }
            let after = h.now()
            let short = Int64(deadline) - Int64(after) - read.nanoseconds - Int64(c.granularity)
            if short > 0, short > shortest?.short ?? 0 { shortest = (short, read) }
        }
        if let shortest {
            c.fail("run: restored early: remaining(key:) read \(shortest.read), \(DurationText.nanoseconds(Double(shortest.short))) less than its deadline as the file recorded it allows")
        }
    }
}
