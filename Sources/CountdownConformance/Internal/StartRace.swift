import Countdown
import CountdownSupport

/// Concurrent starts of one fresh key, as they happened: each call's answer with the instants,
/// on the check's clock, at which it began and returned. The verdict is drawn from those
/// instants, not from what the check meant to arrange: on a loaded machine threads told to start
/// "at once" may be spread over more than the countdown, and a second `.started` after the first
/// countdown could have run out is the contract's answer, not a failure.
struct StartRace {
    struct Attempt: Sendable {
        let answer: String
        let begin: UInt64
        let end: UInt64
        var started: Bool { answer == "started" }
    }

    let attempts: [Attempt]
    /// The countdowns' duration in nanoseconds.
    let duration: UInt64

    /// How far apart the first call began and the last returned.
    var spread: UInt64 {
        (attempts.map(\.end).max() ?? 0) &- (attempts.map(\.begin).min() ?? 0)
    }

    /// Whether the calls were concurrent for the whole of the first countdown: all of them
    /// returned before it could have run out, so exactly one of them started it.
    var overlapped: Bool { spread < duration }

    /// Why the answers cannot be explained, or nil when they can. Every answer is `.started` or
    /// `.attached`; one at least is `.started` (the key was fresh). Two `.started` answers are one
    /// too many unless one of the two calls returned at least `duration` after the other began:
    /// a countdown never finishes before its deadline, so the first countdown was still running
    /// while both were made.
    func violation(describing what: String) -> String? {
        let answers = attempts.map(\.answer)
        let started = attempts.filter(\.started).sorted { $0.begin < $1.begin }
        guard attempts.allSatisfy({ $0.started || $0.answer.hasPrefix("attached") }), !started.isEmpty else {
            return "\(what) answered \(answers): \(started.count) .started, not one"
        }
        for (earlier, later) in zip(started, started.dropFirst()) {
            // Either could have come first; the second must have returned a whole countdown
            // after the first began (calls one after another are held to this as well).
            let apart = max(Int64(bitPattern: later.end &- earlier.begin), Int64(bitPattern: earlier.end &- later.begin))
            if apart < Int64(duration) {
                return "\(what) answered \(answers): \(started.count) .started, not one "
                    + "(two of them began and returned within \(DurationText.nanoseconds(Double(max(apart, 0)))), "
                    + "less than the \(DurationText.nanoseconds(Double(duration))) countdown)"
            }
        }
        return nil
    }

    /// Starts `key` on one thread per scheduler at once (the same scheduler, or a fleet's), each
    /// with its recorder, reading `now` (the check's clock) around each call.
    static func run(
        _ key: String, duration: Duration, on schedulers: [any CountdownScheduler], recorders: [Recorder],
        now: @escaping @Sendable () -> UInt64
    ) -> StartRace {
        let attempts = Locked([Attempt?](repeating: nil, count: schedulers.count))
        onThreads(schedulers.count) { thread in
            let begin = now()
            let answer: String
            do {
                answer = "\(try schedulers[thread].start(key: key, duration: duration, observer: recorders[thread].observer))"
            } catch {
                answer = "threw \(error)"
            }
            let attempt = Attempt(answer: answer, begin: begin, end: now())
            attempts.withLock { $0[thread] = attempt }
        }
        return StartRace(attempts: attempts.withLock { $0.compactMap { $0 } }, duration: nanoseconds(duration))
    }
}
