#if Redis
import Countdown

/// A start's or attach's answer. The keyspace strategy's script gives it whole: {now µs (server
/// clock), 0 started | 1 attached | 2 over capacity | 3 nothing to attach, generation, duration
/// µs, `r`/`p`, deadline µs, remaining µs, attach serial, change (pauses and resumes so far)};
/// the sorted set's gives many, each as short as it can be (``sequence(_:requested:)``).
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

    private init(
        now: Int64, outcome: Outcome, generation: Int64 = 0, duration: Int64 = 0, paused: Bool = false, deadline: Int64 = 0,
        remaining: Int64 = 0, attachSerial: Int64 = 0, change: Int64 = 0
    ) {
        (self.now, self.outcome, self.generation, self.duration, self.paused) = (now, outcome, generation, duration, paused)
        (self.deadline, self.remaining, self.attachSerial, self.change) = (deadline, remaining, attachSerial, change)
    }

    /// The answers of the sorted set's start script (``ZSetScripts/start``) to starts of
    /// `requested` µs each, in order: {now, then per start `0 generation deadline` (started: the
    /// rest is what a new countdown holds), `1` and the seven fields above (attached), `2` or
    /// `3`}. An error, or an answer cut short, throws.
    static func sequence(_ reply: RedisReply, requested: [Int64]) throws(CountdownError) -> [StartAnswer] {
        if case .error(let text) = reply { throw RedisFailure.server(text).countdownError }
        let fields = reply.elements
        guard let now = fields.first?.int else { throw .unavailable(.protocol, "unexpected answer \(reply)") }
        var answers: [StartAnswer] = []
        answers.reserveCapacity(requested.count)
        var index = 1
        for micros in requested {
            func field(_ offset: Int) -> RedisReply? { index + offset < fields.count ? fields[index + offset] : nil }
            switch field(0)?.int {
            case 0:
                guard let generation = field(1)?.int, let deadline = field(2)?.int else { break }
                answers.append(StartAnswer(
                    now: now, outcome: .started, generation: generation, duration: micros, deadline: deadline, remaining: micros))
                index += 3
                continue
            case 1:
                guard let generation = field(1)?.int, let duration = field(2)?.int, let state = field(3)?.text,
                      let deadline = field(4)?.int, let remaining = field(5)?.int, let attachSerial = field(6)?.int,
                      let change = field(7)?.int
                else { break }
                answers.append(StartAnswer(
                    now: now, outcome: .attached, generation: generation, duration: duration, paused: state == "p", deadline: deadline,
                    remaining: remaining, attachSerial: attachSerial, change: change))
                index += 8
                continue
            case 2, 3:
                answers.append(StartAnswer(now: now, outcome: field(0)?.int == 2 ? .overCapacity : .nothingToAttach))
                index += 1
                continue
            default: break
            }
            throw .unavailable(.protocol, "unexpected answer \(reply)")
        }
        return answers
    }

    /// The sorted set's answer to `count` starts as each start's own answer (its `now`, then its
    /// fields), for starts that waited together and went as one script
    /// (``PipeRequest/Merging``); nil when it is not such an answer.
    static func split(_ reply: RedisReply, count: Int) -> [RedisReply]? {
        PipeRequest.Merging.split(reply, count: count) { first in
            switch first {
            case 0: 3
            case 1: 8
            case 2, 3: 1
            default: nil
            }
        }
    }

    /// What the registry observes for this answer, received at `receivedAt` (monotonic): a
    /// start tells the duration asked for (`requested`), an attach what the server answered.
    /// `sentAt`, an instant before the call was sent: the server read its clock after it, so
    /// the deadline placed here from `receivedAt` is late by at most the difference (``ObservedCountdown/lead``).
    func observation(key: String, token: String, requested: Duration, observer: FleetObserver, receivedAt: Int64, sentAt: Int64? = nil)
        -> ObserverRegistry.Answer
    {
        let phase: ObservedCountdown.Phase =
            paused ? .paused(remaining: remaining * 1000) : .running(deadline: receivedAt + (deadline - now) * 1000)
        return ObserverRegistry.Answer(
            key: key, generation: generation, token: token, attachSerial: attachSerial, duration: duration * 1000,
            phase: phase, change: change, told: outcome == .started ? requested.nanoseconds : remaining * 1000, observer: observer,
            lead: sentAt.map { max(0, receivedAt - $0) } ?? 0)
    }

    /// The local deadline of a running countdown as answered (nil when paused).
    func localDeadline(receivedAt: Int64) -> Int64? { paused ? nil : receivedAt + (deadline - now) * 1000 }

    var answer: CountdownStart { outcome == .started ? .started : .attached(remaining: .microseconds(remaining)) }
}
#endif
