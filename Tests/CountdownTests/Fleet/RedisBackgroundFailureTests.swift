#if Redis
import Countdown
@testable import CountdownConformance
import Foundation
import Testing

@testable import CountdownRedis

/// A member's own threads (claimer, inbox reader) call Redis with no caller to see a refusal.
/// Without `+blmove` the inbox reader once retried with no pause, 62 062 times in 2.5 s, and
/// nothing said why messages between members were lost.
@Suite("redis(zset): a member's own threads refused", .dedicatedThread, .timeLimit(.minutes(2)))
struct RedisBackgroundFailureTests {
    /// How many times Redis was sent `command` since the last `CONFIG RESETSTAT`, run or refused.
    static func sent(_ command: String, _ server: RedisAllOrNothingTests.Server) throws -> Int {
        let info = try server.command(["INFO", "commandstats"]).text ?? ""
        guard let line = info.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_\(command):") }) else { return 0 }
        var total = 0
        for field in line.split(separator: ":")[1].split(separator: ",") {
            let pair = field.split(separator: "=")
            if pair.count == 2, ["calls", "rejected_calls", "failed_calls"].contains(pair[0]) { total += Int(pair[1]) ?? 0 }
        }
        return total
    }

    @Test("BLMOVE refused: the inbox reader tries at most ten times a second, and the scheduler says why")
    func inboxRefused() throws {
        let server = try RedisAllOrNothingTests.Server()
        defer { server.remove() }
        // Taken once the member runs: init itself would refuse it (RedisPermissionTests).
        let s = try RedisCountdownScheduler(endpoint: server.user, namespace: "aon-inbox", tickInterval: .milliseconds(50))
        _ = try server.command(["ACL", "SETUSER", "countdown", "-blmove"])
        _ = try server.command(["CONFIG", "RESETSTAT"])
        let began = ContinuousClock.now
        Thread.sleep(forTimeInterval: 2)
        let tries = try Self.sent("blmove", server)
        let seconds = Double((ContinuousClock.now - began).nanoseconds) / 1e9
        s.shutdown()
        #expect(tries >= 1, "the reader never tried")
        // The one in flight when the grant went, the first refused, then at most ten a second.
        #expect(Double(tries) <= 2 + 10 * seconds, "\(tries) BLMOVEs in \(seconds) s: more than ten a second")
        let failure = try #require(s.lastBackgroundFailure, "the refusal was not shown")
        guard case .unavailable(let reason, let text) = failure else { Issue.record("\(failure)"); return }
        #expect(reason == .authentication)
        #expect(text.contains("inbox reader's BLMOVE") && text.lowercased().contains("blmove"), "\(text)")
        #expect(s.backgroundFailures >= tries - 2)
    }

    @Test("the claim script refused: the scheduler says why, and a countdown finishes once the grant is back")
    func claimRefused() throws {
        let server = try RedisAllOrNothingTests.Server()
        defer { server.remove() }
        let s = try RedisCountdownScheduler(endpoint: server.user, namespace: "aon-claim", tickInterval: .milliseconds(50))
        defer { s.shutdown() }
        let log = recorder()
        #expect(try s.start(key: "sms-code:+8613812345678", duration: .milliseconds(300), observer: log.observer) == .started)
        _ = try server.command(["ACL", "SETUSER", "countdown", "-zrangebyscore"])
        #expect(!log.waitForFinish(timeout: .seconds(1)), "finished though no claim could take it")
        let failure = try #require(s.lastBackgroundFailure, "the refusal was not shown")
        guard case .unavailable(let reason, let text) = failure else { Issue.record("\(failure)"); return }
        #expect(reason == .authentication)
        #expect(text.contains("claim") && text.contains("ZRANGEBYSCORE"), "\(text)")
        _ = try server.command(["ACL", "SETUSER", "countdown", "+zrangebyscore"])
        #expect(log.waitForFinish(), "never finished once the grant was back")
    }
}
#endif
