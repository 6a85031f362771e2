#if Redis
import Countdown
import Foundation
import Synchronization

/// What a Redis strategy's engine does for ``RedisCountdownScheduler``: every call throws
/// ``CountdownError`` (``CountdownError/unavailable(_:)`` when Redis cannot be reached); the
/// observers' side is the ``LocalWatch`` each engine keeps.
protocol FleetEngine: Sendable {
    var settings: SchedulerSettings { get }
    var watch: LocalWatch { get }
    /// Calls the protocol's non-throwing forms answered as if nothing were there.
    var unavailableCalls: Atomic<Int> { get }

    func start(key: String, duration: Duration, watch: LocalWatch.Watch) throws(CountdownError) -> CountdownStart
    func startMany(_ batch: [(String, Duration, LocalWatch.Watch)]) -> [Result<CountdownStart, CountdownError>]
    func attach(key: String, watch: LocalWatch.Watch) throws(CountdownError) -> Duration?
    func cancel(key: String) throws(CountdownError) -> Bool
    func pause(key: String) throws(CountdownError) -> Bool
    func resume(key: String) throws(CountdownError) -> Bool
    func remaining(key: String) throws(CountdownError) -> Duration?
    func activeKeys() throws(CountdownError) -> [String]
    func activeCount() throws(CountdownError) -> Int
    func shutdown()
}

extension RedisFailure {
    /// The contract's error: a call that could not be carried out.
    var countdownError: CountdownError {
        switch self {
        case .unreachable(let why): .unavailable(why)
        case .server(let why): .unavailable("the server refused: \(why)")
        }
    }
}
#endif

#if Redis
/// A start's or attach's answer, as both strategies' start scripts give it: {0 started | 1
/// attached | 2 over capacity | 3 nothing to attach, generation, duration µs, `r`/`p`, deadline
/// µs, remaining µs, now µs} (server clock).
struct StartAnswer {
    enum Outcome { case started, attached, overCapacity, nothingToAttach }

    let outcome: Outcome
    let generation: Int64
    let duration: Int64
    let paused: Bool
    let deadline: Int64
    let remaining: Int64
    let now: Int64
    /// Orders the observers of one countdown as the server saw them attach; nil where the
    /// strategy keeps no such order (keyspace).
    let attachSerial: Int64?

    init(_ reply: RedisReply) throws(CountdownError) {
        let fields = reply.elements
        switch fields.first?.int {
        case 2: outcome = .overCapacity
        case 3: outcome = .nothingToAttach
        case 0, 1:
            guard fields.count >= 7, let generation = fields[1].int, let duration = fields[2].int, let state = fields[3].text,
                  let deadline = fields[4].int, let remaining = fields[5].int, let now = fields[6].int
            else { throw .unavailable("unexpected answer \(reply)") }
            outcome = fields[0].int == 0 ? .started : .attached
            (self.generation, self.duration, self.paused) = (generation, duration, state == "p")
            (self.deadline, self.remaining, self.now) = (deadline, remaining, now)
            attachSerial = fields.count > 7 ? fields[7].int : nil
            return
        default: throw .unavailable("unexpected answer \(reply)")
        }
        (generation, duration, paused, deadline, remaining, now, attachSerial) = (0, 0, false, 0, 0, 0, nil)
    }

    /// Observes the countdown here with `observer`, as answered: a start tells the duration
    /// asked for (`requested`), an attach what the server answered. Returns the local deadline
    /// of a running countdown (nil when paused).
    func observe(
        in watch: LocalWatch, key: String, owner: String?, requested: Duration, observer: LocalWatch.Watch, receivedAt: Int64
    ) throws(CountdownError) -> Int64? {
        let local = receivedAt + (deadline - now) * 1000
        let phase: LocalWatch.Phase = paused ? .paused(remaining: remaining * 1000) : .running(deadline: local)
        let told = outcome == .started ? requested.nanoseconds : remaining * 1000
        guard watch.observe(
            key: key, generation: generation, owner: owner, attachSerial: attachSerial, duration: duration * 1000,
            phase: phase, told: told, watch: observer)
        else { throw .shutDown }
        return paused ? nil : local
    }

    var answer: CountdownStart { outcome == .started ? .started : .attached(remaining: .microseconds(remaining)) }
}

/// Keys compare by canonical equivalence, as Swift's strings do; Redis compares bytes: every key
/// goes to Redis in one canonical form (NFC).
func canonicalKey(_ key: String) -> String {
    // ASCII is its own canonical form; only other keys pay for Foundation's normalization.
    key.utf8.allSatisfy { $0 < 0x80 } ? key : key.precomposedStringWithCanonicalMapping
}
#endif
