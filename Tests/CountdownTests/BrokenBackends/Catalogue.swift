@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Synchronization
import Testing

// The catalogue: every broken backend and the check that must reject it.

/// A broken backend and the check that must reject it.
struct BrokenBackend: Sendable, CustomTestStringConvertible {
    let name: String
    let rejectedBy: String
    /// Other checks that must reject it too (a defect every check can see, where each callback runs).
    let alsoRejectedBy: [String]
    /// Builds it on a base: real or virtual.
    let build: @Sendable (Environment, Base) throws -> any CountdownScheduler
    /// Whether it is built on the keyed table through `Base`, so that it has a virtual-time
    /// twin (those aimed at a profile check need the real world, and are judged in real time).
    let inVirtualTime: Bool
    /// Whether its check can judge it in real time (replay cannot: real clocks never repeat).
    let inRealTime: Bool

    init(name: String, rejectedBy: String, alsoRejectedBy: [String] = [], inVirtualTime: Bool = true, inRealTime: Bool = true,
         build: @escaping @Sendable (Environment, Base) throws -> any CountdownScheduler) {
        self.name = name
        self.rejectedBy = rejectedBy
        self.alsoRejectedBy = alsoRejectedBy
        self.inVirtualTime = inVirtualTime
        self.inRealTime = inRealTime
        self.build = build
    }

    /// On the dispatch-source backend, in real time.
    var make: CountdownConformance.Factory { { e in try build(e, Base(isVirtual: false)) } }

    /// On the virtual scheduler, driving its clock; nil when it has no virtual twin.
    var makeInVirtualTime: CountdownConformance.Factory? {
        guard inVirtualTime else { return nil }
        return { e in
            let broken = try build(e, Base(isVirtual: true))
            return broken is any KeyedCountdownScheduler ? KeyedInVirtualTime(broken) : InVirtualTime(broken)
        }
    }

    var testDescription: String { "\(name) → \(rejectedBy)" }

    /// Each check that must reject it, paired with it: what the scores run.
    var aimedAt: [(broken: BrokenBackend, check: String, label: String)] {
        ([rejectedBy] + alsoRejectedBy).map { (self, $0, $0 == rejectedBy ? name : "\(name) [\($0)]") }
    }

    static let all: [BrokenBackend] = [
        .init(name: "no immediate tick", rejectedBy: "start") { NoImmediateTick(try $1($0)) },
        .init(name: "a store: the finish delivered before its write", rejectedBy: "store.finish") { e, base in
            StoreWithDefects(try base.keyed(e), .finishesBeforeWrite)
        },
        .init(name: "a store: paused countdowns left out of the file", rejectedBy: "store.restore") { e, base in
            StoreWithDefects(try base.keyed(e), .forgetsPaused)
        },
        .init(name: "a store: expired countdowns left in the file", rejectedBy: "store.restore") { e, base in
            StoreWithDefects(try base.keyed(e), .keepsWhatItRead)
        },
        // 1 ms: judged by the deadline the file recorded, however late the machine delivers.
        .init(name: "a store: running countdowns restored 1 ms early", rejectedBy: "store.restore") { e, base in
            RestoresEarly(try base.keyed(e), by: .milliseconds(1))
        },
        .init(name: "a store: waitUntilStored() returns before the write", rejectedBy: "store.wait") { e, base in
            StoreWithDefects(try base.keyed(e), .waitReturnsEarly)
        },
        .init(name: "a store: a bad file read as an empty store", rejectedBy: "store.bad-file") { e, base in
            StoreWithDefects(try base.keyed(e), .readsBadFilesAsEmpty)
        },
        .init(name: "a resume before the first tick is delivered drops it", rejectedBy: "start") { ResumeDropsTheFirstTick(try $1($0)) },
        .init(name: "remaining rises", rejectedBy: "ticks") { RemainingRises(try $1($0)) },
        .init(name: "finishes twice", rejectedBy: "finish") { FinishesTwice(try $1($0)) },
        .init(name: "finishes early", rejectedBy: "finish") { FinishesEarly(try $1($0)) },
        // Virtual time reads exactly: a millisecond early is early. (In real time a millisecond
        // is within reach of a late wake-up; the next one is judged there.)
        .init(name: "finishes 1 ms early", rejectedBy: "finish", inRealTime: false) { FinishesSlightlyEarly(try $1($0), by: .milliseconds(1)) },
        .init(name: "declares a 2 ms tolerance and finishes 0.8 ms early", rejectedBy: "finish", inVirtualTime: false) { e, _ in
            // Its timers wake on time, 0.8 ms before the deadline: a backend that read its
            // tolerance as "up to this early" (a timer with a 2 ms tolerance wakes up to 2 ms late).
            FinishesSlightlyEarly(try TimestampScheduler(
                tickInterval: e.tickInterval, clock: .continuous, deliveryQueue: e.deliveryQueue), by: .microseconds(800), declaring: .milliseconds(2))
        },
        .init(name: "restarts on attach", rejectedBy: "attach") { RestartsOnAttach(try $1($0)) },
        .init(name: "attach(key:) starts", rejectedBy: "attach-only") { AttachStarts(try $1($0)) },
        .init(name: "ticks after cancel", rejectedBy: "cancel") { TicksAfterCancel(try $1($0)) },
        .init(name: "ignores pause", rejectedBy: "pause-resume") { IgnoresPause(try $1($0)) },
        .init(name: "accepts an empty key", rejectedBy: "bad-input") { AcceptsEmptyKey(try $1($0)) },
        // A fleet's checks need two schedulers sharing one store: in real time only.
        .init(name: "a fleet that shares nothing (starts)", rejectedBy: "fleet.one-key", inVirtualTime: false) { SharesNothing(try $1($0)) },
        .init(name: "a fleet that shares nothing (cancels)", rejectedBy: "fleet.cancel", inVirtualTime: false) { SharesNothing(try $1($0)) },
        .init(name: "a fleet that shares nothing (attaches)", rejectedBy: "fleet.attach", inVirtualTime: false) { SharesNothing(try $1($0)) },
        .init(name: "deadlocks on a re-entrant cancel", rejectedBy: "reentrancy") {
            DeadlocksOnReentrantCancel(try $1($0))
        },
        .init(name: "races concurrent starts", rejectedBy: "concurrency") { RacesConcurrentStarts(try $1($0)) },
        .init(name: "delivers off the queue", rejectedBy: "delivery") {
            DeliversOffQueue(try $1.offQueue($0))
        },
        // Where each callback runs is judged in every check: these two fail every contract check
        // that attaches, or that hears a finish. (profile.slow-observer and profile.drift, which
        // hear finishes in real time, reject the second too; they have broken backends of their own.)
        .init(name: "attach(key:) tells its first tick on the caller's thread", rejectedBy: "attach-only",
              alsoRejectedBy: ["reentrancy", "counts", "events", "randomized"]) { AttachTellsFirstTickInline(try $1($0)) },
        .init(name: "a finish runs on another queue", rejectedBy: "finish",
              alsoRejectedBy: ["ticks", "attach", "pause-resume", "reentrancy", "concurrency", "one-key", "delivery",
                               "observer-release", "keys", "edges", "events", "lifecycle", "randomized"]) { FinishesOnAnotherQueue(try $1($0)) },
        .init(name: "keeps observers", rejectedBy: "observer-release") { KeepsObservers(try $1($0)) },
        .init(name: "leaks a thread", rejectedBy: "shutdown") { LeaksThread(try $1($0)) },
        .init(name: "start on a paused key resumes it", rejectedBy: "attach") { AttachResumes(try $1($0)) },
        .init(name: "attach(key:) resumes a paused countdown", rejectedBy: "attach-only") { AttachOnlyResumes(try $1($0)) },
        .init(name: "never runs a non-ASCII key", rejectedBy: "keys") { IgnoresNonASCIIKeys(try $1($0)) },
        .init(name: "compares keys by Unicode scalars", rejectedBy: "keys") { ComparesKeysByScalars(try $1($0)) },
        .init(name: "truncates keys at a NUL", rejectedBy: "keys") { TruncatesKeysAtNUL(try $1($0)) },
        .init(name: "refuses exactly the maximum duration", rejectedBy: "edges") { RefusesTheMaximum(try $1($0)) },
        .init(name: "never runs a countdown shorter than a tick", rejectedBy: "edges") { DropsSubTickDurations(try $1($0)) },
        .init(name: "lists a finished key for 2.5 ticks", rejectedBy: "finish") { ListsFinishedKeys(try $1($0)) },
        .init(name: "keeps a key busy for a tick after its finish", rejectedBy: "finish") { BusyAfterFinish(try $1($0)) },
        .init(name: "its thread outlives a release without shutdown", rejectedBy: "release") { ThreadOutlivesRelease(try $1($0)) },
        .init(name: "a key cancelled while paused restarts paused", rejectedBy: "randomized") { RestartsPausedAfterCancel(try $1($0)) },
        .init(name: "events(key:) never ends", rejectedBy: "events") { EventsNeverEnd(try $1($0)) },
        .init(name: "a consumer that stops cancels the countdown", rejectedBy: "events") {
            EventsCancelWhenConsumerGoes(try $1($0))
        },
        .init(name: "events(key:) leaves out the attach tick", rejectedBy: "events") { EventsSkipTheAttachTick(try $1($0)) },
        .init(name: "the foreground cancels every countdown", rejectedBy: "lifecycle") { ForegroundCancels(try $1($0)) },
        .init(name: "the foreground resumes paused countdowns", rejectedBy: "lifecycle") { ForegroundResumesPaused(try $1($0)) },
        .init(name: "merges keys that differ in letter case", rejectedBy: "distinct-keys") {
            MergesKeys(try $1($0), fold: MergesKeys.caseInsensitive)
        },
        .init(name: "merges keys that differ in leading or trailing whitespace", rejectedBy: "distinct-keys") {
            MergesKeys(try $1($0), fold: MergesKeys.trimmed)
        },
        .init(name: "merges keys that share their first 255 bytes", rejectedBy: "distinct-keys") {
            MergesKeys(try $1($0), fold: MergesKeys.first255Bytes)
        },
        .init(name: "merges emoji with and without modifiers or variation selectors", rejectedBy: "distinct-keys") {
            MergesKeys(try $1($0), fold: MergesKeys.withoutModifiers)
        },
        .init(name: "merges keys equal after NFKC folding", rejectedBy: "distinct-keys") {
            MergesKeys(try $1($0), fold: MergesKeys.compatibilityFolded)
        },
        .init(name: "activeCount leaves out paused countdowns", rejectedBy: "counts") { CountsOnlyRunning(try $1($0)) },
        .init(name: "activeKeys lists a key once more per attach", rejectedBy: "counts") { ListsAttachesAgain(try $1($0)) },
        .init(name: "two threads starting one key both get .started", rejectedBy: "one-key") { ChecksThenStarts(try $1($0)) },
        .init(name: "two threads cancelling one key both get true", rejectedBy: "one-key") { ChecksThenCancels(try $1($0)) },
        .init(name: "a cancel from inside its observer, then one more tick", rejectedBy: "calls-from-observer") {
            TicksAfterCallFromObserver(try $1($0), call: .cancel)
        },
        .init(name: "a pause from inside its observer, then one more tick", rejectedBy: "calls-from-observer") {
            TicksAfterCallFromObserver(try $1($0), call: .pause)
        },
        .init(name: "a replacing start from inside its observer, then one more tick to the old observer", rejectedBy: "calls-from-observer") {
            TicksAfterCallFromObserver(try $1($0), call: .replace)
        },
        .init(name: "drops ticks at random: no run repeats", rejectedBy: "replay", inRealTime: false) { DropsTicksAtRandom(try $1($0)) },
        .init(name: "drops the overflow silently", rejectedBy: "profile.capacity", inVirtualTime: false) { DropsOverflow(try $1($0)) },
        .init(name: "timestamp(wall) declared immune to the wall clock", rejectedBy: "profile.wall-clock", inVirtualTime: false) { e, _ in
            MisdeclaredProfile(try TimestampScheduler(
                tickInterval: e.tickInterval, clock: e.wallClock, deliveryQueue: e.deliveryQueue)) { $0.wallClockJump = .immune }
        },
        .init(name: "timers on the delivery queue: a slow observer stalls every countdown", rejectedBy: "profile.slow-observer", inVirtualTime: false) { e, _ in
            try TimersOnDeliveryQueue(e)
        },
        .init(name: "dispatch-source declared stalling behind a slow observer", rejectedBy: "profile.slow-observer", inVirtualTime: false) {
            MisdeclaredProfile(try $1($0)) { $0.slowObserver = .stallsCountdowns }
        },
        .init(name: "dispatch-source declared drifting", rejectedBy: "profile.drift", inVirtualTime: false) {
            MisdeclaredProfile(try $1($0)) { $0.drift = .accumulates }
        },
        .init(name: "operation-queue declared drift-free", rejectedBy: "profile.drift", inVirtualTime: false) { e, _ in
            MisdeclaredProfile(try OperationQueueScheduler(tickInterval: e.tickInterval, deliveryQueue: e.deliveryQueue)) {
                $0.drift = .bounded
            }
        },
    ]
}
