import Countdown
import CountdownSupport

/// The `fleet.cancel` check: a countdown started in one scheduler of a fleet is cancelled from
/// another; it ends everywhere, its observer hears nothing that begins more than
/// ``FleetTrial/silence`` after the cancel returned (it hears of it one hop later, with nothing
/// asked of its own scheduler), and never a finish; asked at once, its scheduler knows.
///
/// The countdown is short, so that a member that never heard of the cancel finishes it while the
/// check watches. Each part is judged only when its cancel returned before the countdown's
/// earliest deadline (the start call's beginning plus its duration), by the timestamps: on a
/// loaded machine the other member's calls once came after a 400 ms countdown had ended, and
/// failed the check for what it did not judge. Such a part is done again with a countdown four
/// times as long (``Lengthening``).
enum FleetCancelCheck {
    static let check = ConformanceCheck(
        "fleet.cancel", .contract,
        "a fleet: a cancel from another scheduler ends the countdown everywhere; silence within 100 ms, no finish",
        body: run)

    static func run(_ c: CheckContext) throws {
        guard let (a, b) = try c.makeFleet(tick: .milliseconds(20)) else { return }
        let lengthening = Lengthening(initial: .milliseconds(400), call: "cancel")
        var figures: [String] = []
        for (name, part) in [("silence", silence), ("asked", answersAtOnce)] {
            guard let (judged, lengthened) = lengthening.run(c, name, { duration, attempt in
                part(a, b, c, "fleet:cancel:\(name):\(attempt)", duration)
            }) else { continue }
            figures += [judged.figure, lengthened].compactMap { $0 }
        }
        if !figures.isEmpty { c.figure(figures.joined(separator: "; ")) }
    }

    /// A part judged, with its figure; nil when its cancel came too late to judge.
    private struct Judged {
        var figure: String?
    }

    /// Nothing is asked of the first scheduler between the other's cancel and the judgement: a
    /// member that learns of another's cancel only when it is asked itself (a cancel of its own
    /// that finds nothing, a remaining) would be silenced by the check's own call, and pass.
    /// Nothing recorded when the cancel returned after the countdown's earliest deadline.
    private static func silence(_ a: Harness, _ b: Harness, _ c: CheckContext, key: String, duration: Duration) -> Judged? {
        guard let run = started(key, for: duration, in: a, c) else { return Judged() }
        let seen = b.scheduler.remaining(key: key) != nil
        let listed = b.scheduler.activeKeys.contains(key)
        let cancelled = b.scheduler.cancel(key: key)
        let returned = b.now()
        guard returned < run.earliestDeadline else { return nil }
        c.expect(seen, "the other scheduler does not see the countdown")
        c.expect(listed, "the other scheduler does not list the key")
        c.expect(cancelled, "cancel from the other scheduler returned false")
        // Past the countdown's deadline, so that a backend that never heard of the cancel has
        // ticked and finished by then.
        run.settlePastDeadline(a, after: returned)
        let observer = run.observer
        let bound = nanoseconds(FleetTrial.silence)
        let late = observer.all.filter { $0.at > returned + bound }
        if let last = late.last {
            c.fail("\(late.count) event(s) began more than \(FleetTrial.silence) after the cancel from the other scheduler returned, the last \(DurationText.nanoseconds(Double(last.at - returned))) after it (nothing was asked of the first scheduler meanwhile)")
        }
        c.expect(observer.finishes.isEmpty, "the cancelled countdown finished")
        c.expectEqual(a.scheduler.activeCount, 0, "activeCount", "after the cancel")
        let after = observer.all.filter { $0.at > returned }.map { $0.at - returned }.max()
        return Judged(figure: after.map { "the observer's last event began \(DurationText.nanoseconds(Double($0))) after the cancel from the other scheduler returned" }
            ?? "no event after the cancel from the other scheduler returned")
    }

    /// Right after the other's cancel returned, the first scheduler answers as the fleet is:
    /// nothing runs, and a cancel of its own finds nothing. Nothing recorded when the cancel
    /// returned after the countdown's earliest deadline.
    private static func answersAtOnce(_ a: Harness, _ b: Harness, _ c: CheckContext, key: String, duration: Duration) -> Judged? {
        guard let run = started(key, for: duration, in: a, c) else { return Judged() }
        let cancelled = b.scheduler.cancel(key: key)
        let returned = b.now()
        let running = a.scheduler.remaining(key: key) != nil
        let cancelledAgain = a.scheduler.cancel(key: key)
        guard returned < run.earliestDeadline else { return nil }
        c.expect(cancelled, "\(key): cancel from the other scheduler returned false")
        c.expect(!running, "the countdown runs on in the first scheduler after the cancel")
        c.expect(!cancelledAgain, "a second cancel, from the first scheduler, returned true")
        run.settlePastDeadline(a, after: returned)
        c.expect(run.observer.finishes.isEmpty, "\(key): the cancelled countdown finished")
        return Judged()
    }

    /// A countdown started in `a`, and the bounds of its deadline on the check's clock.
    private struct Run {
        let observer: Recorder
        /// No backend's deadline comes before: the start call's beginning plus its duration.
        let earliestDeadline: UInt64
        /// No backend's deadline comes after: the start call's return plus its duration.
        let latestDeadline: UInt64

        /// Lets 500 ms pass after `returned`, and 100 ms past the latest deadline, so that a
        /// backend that never heard of the cancel has ticked and finished by then; then drains.
        func settlePastDeadline(_ a: Harness, after returned: UInt64) {
            a.settle(.nanoseconds(Int64(max(returned + 500_000_000, latestDeadline + 100_000_000) - returned)))
            a.drain()
        }
    }

    /// The countdown started in `a`, once its observer heard two events; nil, failed, when
    /// the start did not answer .started.
    private static func started(_ key: String, for duration: Duration, in a: Harness, _ c: CheckContext) -> Run? {
        let observer = a.recorder()
        let began = a.now()
        guard (try? a.scheduler.start(key: key, duration: duration, observer: observer.observer)) == .started else {
            c.fail("\(key): the first start did not answer .started")
            return nil
        }
        let returned = a.now()
        _ = observer.wait { $0.count >= 2 }
        let length = nanoseconds(duration)
        return Run(observer: observer, earliestDeadline: began + length, latestDeadline: returned + length)
    }
}
