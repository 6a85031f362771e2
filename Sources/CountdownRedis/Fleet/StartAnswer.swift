#if Redis
import Countdown

/// A start's or attach's answer, as both strategies' start scripts give it: {now µs (server
/// clock), 0 started | 1 attached | 2 over capacity | 3 nothing to attach, generation, duration
/// µs, `r`/`p`, deadline µs, remaining µs, attach serial, change (pauses and resumes so far)}.
struct StartAnswer {
    enum Outcome { case started, attached, overCapacity, nothingToAttach }

    let now: Int64
    let outcome: Outcome
    let generation: Int64
    let duration: Int64
    let paused: Bool
    let deadline: Int64
    let remaining: Int64
    let attachSerial: Int64
    let change: Int64

    init(_ reply: RedisReply) throws(CountdownError) {
        let fields = reply.elements
        guard let now = fields.first?.int else { throw .unavailable(.protocol, "unexpected answer \(reply)") }
        self.now = now
        switch fields.count > 1 ? fields[1].int : nil {
        case 2: outcome = .overCapacity
        case 3: outcome = .nothingToAttach
        case 0, 1:
            guard fields.count >= 9, let generation = fields[2].int, let duration = fields[3].int, let state = fields[4].text,
                  let deadline = fields[5].int, let remaining = fields[6].int, let attachSerial = fields[7].int,
                  let change = fields[8].int
            else { throw .unavailable(.protocol, "unexpected answer \(reply)") }
            outcome = fields[1].int == 0 ? .started : .attached
            (self.generation, self.duration, self.paused) = (generation, duration, state == "p")
            (self.deadline, self.remaining, self.attachSerial, self.change) = (deadline, remaining, attachSerial, change)
            return
        default: throw .unavailable(.protocol, "unexpected answer \(reply)")
        }
        (generation, duration, paused, deadline, remaining, attachSerial, change) = (0, 0, false, 0, 0, 0, 0)
    }

    /// What the registry observes for this answer, received at `receivedAt` (monotonic): a
    /// start tells the duration asked for (`requested`), an attach what the server answered.
    func observation(key: String, token: String, requested: Duration, observer: FleetObserver, receivedAt: Int64)
        -> ObserverRegistry.Answer
    {
        let phase: ObservedCountdown.Phase =
            paused ? .paused(remaining: remaining * 1000) : .running(deadline: receivedAt + (deadline - now) * 1000)
        return ObserverRegistry.Answer(
            key: key, generation: generation, token: token, attachSerial: attachSerial, duration: duration * 1000,
            phase: phase, change: change, told: outcome == .started ? requested.nanoseconds : remaining * 1000, observer: observer)
    }

    /// The local deadline of a running countdown as answered (nil when paused).
    func localDeadline(receivedAt: Int64) -> Int64? { paused ? nil : receivedAt + (deadline - now) * 1000 }

    var answer: CountdownStart { outcome == .started ? .started : .attached(remaining: .microseconds(remaining)) }
}
#endif
