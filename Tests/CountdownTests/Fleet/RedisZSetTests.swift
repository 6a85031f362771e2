#if Redis
import Countdown
@testable import CountdownRedis
@testable import CountdownConformance
import Dispatch
import Foundation
import Testing

@Suite("redis(zset)", .dedicatedThread, .timeLimit(.minutes(2)))
struct RedisZSetTests {
    @Test("a countdown ticks and finishes once, through a real redis-server")
    func ticksAndFinishes() throws {
        let server = try TestRedis.server()
        let s = try RedisCountdownScheduler(endpoint: server.endpoint, namespace: TestRedis.namespace(), tickInterval: .milliseconds(50))
        defer { s.shutdown() }
        let log = recorder()
        #expect(try s.start(key: "sms-code:+8613812345678", duration: .milliseconds(220), observer: log.observer) == .started)
        #expect(log.waitForFinish())
        let events = log.all
        expectWellFormed(events, "zset")
        #expect(events.first?.event.remaining == .milliseconds(220))
        #expect(events.filter { $0.event.kind == .tick }.count >= 3)
        #expect(s.remaining(key: "sms-code:+8613812345678") == nil)
    }

    /// A call id's script, sent by hand on a connection of the test's own: what a resend after a
    /// lost answer looks like to the server.
    struct RawCalls {
        let connection: RedisConnection
        let prefix: String
        var digests: [String: String] = [:]

        init() throws {
            connection = try RedisConnection(try TestRedis.server().endpoint)
            prefix = "{\(TestRedis.namespace("records"))}"
        }

        /// The ring's size the calls say (``CallRecord``).
        static let ring = 8

        mutating func send(_ script: RedisScript, client: String, serial: Int, _ rest: [String]) throws -> [RedisReply] {
            if digests[script.name] == nil { digests[script.name] = try connection.call(["SCRIPT", "LOAD", script.source]).text }
            let reply = try connection.call(["EVALSHA", digests[script.name]!, "1", prefix, client, String(serial), String(Self.ring)] + rest)
            if case .error(let text) = reply { Issue.record("\(script.name) answered \(text)") }
            return reply.elements
        }
    }

    /// A start whose answer was lost is sent again with its call id. Another member attached in
    /// between; the resend still answers .started, with the first answer's generation, and
    /// nothing is started twice (issue: the resend answered .attached and took the observer back).
    @Test("a start sent again after another member attached answers .started, the same countdown, started once")
    func startSentAgainKeepsItsFirstAnswer() throws {
        var raw = try RawCalls()
        let key = "rate-limit:user:0000123456"
        let first = try raw.send(ZSetScripts.start, client: "a:calls", serial: 1, ["-1", "1", "0", "0", "a/1", key, "60000000"])
        let other = try raw.send(ZSetScripts.start, client: "b:calls", serial: 1, ["-1", "1", "0", "0", "b/1", key, "60000000"])
        let again = try raw.send(ZSetScripts.start, client: "a:calls", serial: 1, ["-1", "1", "0", "0", "a/1", key, "60000000"])
        #expect(first[1].int == 0 && again[1].int == 0, "answers \(first) then \(again): the resend did not answer .started")
        #expect(first[2].int == again[2].int, "the resend named another generation: the countdown was started twice")
        #expect(first[3].int == again[3].int, "the resend moved the deadline")
        #expect(other[1].int == 1 && other[7].int == 1, "the other member's start did not attach as the first attach: \(other)")
        #expect(try raw.connection.call(["ZCARD", "\(raw.prefix):d"]).int == 1)
        #expect(try raw.connection.call(["HGET", "\(raw.prefix):c:\(key)", "o"]).text == "b/1", "the resend took the observer back")
        // A ring's worth of calls later, serial 1's slot holds a newer call: a late copy of it
        // (sent again, answered, then arriving on a closed connection) does nothing.
        let later = 1 + RawCalls.ring
        _ = try raw.send(ZSetScripts.cancel, client: "a:calls", serial: later, ["some-other-key"])
        let late = try raw.send(ZSetScripts.start, client: "a:calls", serial: 1, ["-1", "1", "0", "0", "a/1", "fresh-key-0000000001", "60000000"])
        #expect(late[1].int == -1, "a copy older than its slot's call was answered \(late), not ignored")
        #expect(try raw.connection.call(["ZCARD", "\(raw.prefix):d"]).int == 1, "a copy older than its slot's call started a countdown")
        let cancelled = try raw.send(ZSetScripts.cancel, client: "a:calls", serial: later, ["some-other-key"])
        #expect(cancelled[1].int == 0, "a cancel sent again did not answer as it did")
    }

    /// Many starts in one script answer each as a start of its own would: a key named twice
    /// is started, then attached; a start past the capacity is refused; the generations are the
    /// shard's own and distinct; and a resend of the whole call answers the same, starting nothing.
    @Test("many starts in one script answer as starts of their own, and a resend answers the same")
    func manyStartsInOneScript() throws {
        var raw = try RawCalls()
        _ = try raw.connection.call(["ZADD", "\(raw.prefix):m", String(Int64(Date().timeIntervalSince1970 * 1_000_000)), "b"])
        let keys = ["rate-limit:user:0000000001", "rate-limit:user:0000000002", "rate-limit:user:0000000001", "rate-limit:user:0000000003"]
        // 1 s: soon enough that the other member is woken (a deadline two heartbeats away is not).
        let triples = keys.enumerated().flatMap { ["a/\($0.offset)", $0.element, "1000000"] }
        // Capacity 2, three shards, this one index 2.
        let first = try raw.send(ZSetScripts.start, client: "a:calls", serial: 1, ["2", "3", "2", "0"] + triples)
        let again = try raw.send(ZSetScripts.start, client: "a:calls", serial: 1, ["2", "3", "2", "0"] + triples)
        let answers = try StartAnswer.sequence(.array(first), requested: keys.map { _ in 1_000_000 })
        #expect(answers.map(\.outcome) == [.started, .started, .attached, .overCapacity])
        #expect(answers[0].generation % 3 == 2 && answers[1].generation % 3 == 2 && answers[0].generation != answers[1].generation,
                "generations \(answers.map(\.generation)): not distinct, or not this shard's (g mod 3 = 2)")
        #expect(answers[2].generation == answers[0].generation && answers[2].attachSerial == 1 && answers[2].duration == 1_000_000,
                "the key named twice did not attach to the countdown it started")
        #expect(answers[0].remaining == 1_000_000 && answers[0].deadline - answers[0].now == 1_000_000)
        #expect(Array(first.dropFirst()) == Array(again.dropFirst()), "a resend answered otherwise")
        #expect(try raw.connection.call(["ZCARD", "\(raw.prefix):d"]).int == 2, "not the two countdowns started")
        #expect(try raw.connection.call(["LRANGE", "\(raw.prefix):i:b", "0", "-1"]).elements.compactMap(\.text) == ["w \(answers[0].deadline)"],
                "the other member was not woken once, for the earliest deadline")
        // Earliest, but further away than two heartbeats: each member learns of it from its own claims.
        _ = try raw.send(ZSetScripts.start, client: "a:calls", serial: 2, ["-1", "3", "2", "0", "a/8", "rate-limit:user:0000000009", "2500000"])
        #expect(try raw.connection.call(["DEL", "\(raw.prefix):d"]).int == 1)
        _ = try raw.send(ZSetScripts.start, client: "a:calls", serial: 3, ["-1", "3", "2", "0", "a/9", "rate-limit:user:0000000010", "2500000"])
        #expect(try raw.connection.call(["LLEN", "\(raw.prefix):i:b"]).int == 1, "a deadline 2.5 s away woke the other member")
        let attachOnly = try raw.send(ZSetScripts.start, client: "a:calls", serial: 4, ["-1", "3", "2", "1", "a/10", "no-such-key-000000000001", "1"])
        #expect(try StartAnswer.sequence(.array(attachOnly), requested: [1]).map(\.outcome) == [.nothingToAttach])
    }

    /// A claim whose answer was lost is sent again with its serial: the same countdowns, so the
    /// claimer's own observers still hear their finishes (issue: the retried claim found nothing).
    @Test("a claim sent again answers the countdowns the first claimed")
    func claimSentAgainAnswersTheSame() throws {
        var raw = try RawCalls()
        for index in 0..<3 {
            _ = try raw.send(ZSetScripts.start, client: "a:calls", serial: 1 + index,
                             ["-1", "1", "0", "0", "a/\(index)", "sms-code:+86138123456\(index)", "1000"])
        }
        usleep(10_000)  // past their 1 ms
        let first = try raw.send(ZSetScripts.claim, client: "a:claimer", serial: 7, ["1000"])
        let again = try raw.send(ZSetScripts.claim, client: "a:claimer", serial: 7, ["1000"])
        #expect(first[2].int == 3 && again[2].int == 3, "claimed \(first) then \(again)")
        #expect(first[3].elements.compactMap(\.text) == again[3].elements.compactMap(\.text), "the resend answered other countdowns")
        #expect(first[3].elements.count == 6)
        let next = try raw.send(ZSetScripts.claim, client: "a:claimer", serial: 8, ["1000"])
        #expect(next[2].int == 0, "a new claim found the claimed countdowns again: \(next)")
    }

    /// A countdown past its deadline that no claim has taken yet (its member's claimer is
    /// late, or gone) is one countdown to every call: remaining reads it, and a pause pauses it,
    /// as a cancel would cancel it. The pause once answered "not running" for it while a cancel
    /// after it answered true: the randomized check saw both, once each, under load ("remaining
    /// is 0.0 seconds with no countdown", "cancel returned true though no countdown could be
    /// running"). No claimer runs here: the namespace has no member.
    @Test("a countdown due but not yet claimed is paused, resumed and due again at once")
    func aDueCountdownIsPaused() throws {
        var raw = try RawCalls()
        let key = "sms-code:+8613812345678"
        _ = try raw.send(ZSetScripts.start, client: "a:calls", serial: 1, ["-1", "1", "0", "0", "a/1", key, "1000"])
        usleep(10_000)  // past its 1 ms
        let paused = try raw.send(ZSetScripts.pause, client: "a:calls", serial: 2, [key])
        #expect(paused.count >= 4 && paused[1].int == 1 && paused[3].int == 0,
                "a due countdown's pause answered \(paused), not paused with nothing left")
        #expect(try raw.connection.call(["ZCARD", "\(raw.prefix):d"]).int == 0, "the paused countdown is still due")
        let resumed = try raw.send(ZSetScripts.resume, client: "a:calls", serial: 3, [key])
        #expect(resumed.count >= 4 && resumed[1].int == 1, "its resume answered \(resumed)")
        if resumed.count >= 4, let now = resumed[0].int, let deadline = resumed[3].int {
            #expect(deadline <= now, "resumed with \(deadline - now) µs left, not due at once")
        }
        let claimed = try raw.send(ZSetScripts.claim, client: "a:claimer", serial: 1, ["1000"])
        #expect(claimed[2].int == 1, "the resumed countdown was not claimed at once: \(claimed)")
    }

    /// The claims forget members unseen for ten minutes, with their call records and inboxes:
    /// nothing of a member that died stays in Redis.
    @Test("a member unseen for ten minutes is forgotten, with its records and inbox")
    func goneMembersSwept() throws {
        var raw = try RawCalls()
        let stale = String(Int64(Date().timeIntervalSince1970 * 1_000_000) - 700_000_000)
        _ = try raw.connection.call(["ZADD", "\(raw.prefix):m", stale, "gone"])
        _ = try raw.connection.call(["HSET", "\(raw.prefix):a:gone:calls", "1", "1 x"])
        _ = try raw.connection.call(["RPUSH", "\(raw.prefix):i:gone", "w 1"])
        _ = try raw.send(ZSetScripts.claim, client: "alive:claimer", serial: 1, ["1000"])
        #expect(try raw.connection.call(["ZSCORE", "\(raw.prefix):m", "gone"]) == .null)
        #expect(try raw.connection.call(["EXISTS", "\(raw.prefix):a:gone:calls", "\(raw.prefix):i:gone"]).int == 0)
        #expect(try raw.connection.call(["ZSCORE", "\(raw.prefix):m", "alive"]) != .null)
    }
}
#endif
