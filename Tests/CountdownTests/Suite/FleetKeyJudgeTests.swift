import Countdown
import Testing

@testable import CountdownConformance

/// The fleet judge with histories written by hand: what a killed member may have done counts
/// from the instant it was asked to, not from when it would have said so.
@Suite("Fleet key judge")
struct FleetKeyJudgeTests {
    static let key = "sms-code:+8613810000001-handed-over"
    static let duration: Int64 = 1_500_000_000
    static let t: UInt64 = 10_000_000_000

    /// Member 1 is asked to start the key at `t` and is killed a millisecond later, before it said
    /// anything of the call; member 0 attaches 5 ms after `t`, finds it, and hears its finish.
    static func handedOver(startScheduled: UInt64) -> FleetKeyJudge {
        let start = FleetHistory.Call(
            id: 1, member: 1, key: key, operation: .start, duration: duration, isCleanup: false, scheduled: startScheduled)
        var attach = FleetHistory.Call(
            id: 2, member: 0, key: key, operation: .attach, duration: duration, isCleanup: false, scheduled: t + 5_000_000)
        attach.invoked = t + 5_000_000
        attach.returned = t + 6_000_000
        attach.answer = .attached(remaining: duration - 5_000_000)
        let events: [Int: [FleetHistory.Event]] = [2: [
            FleetHistory.Event(observer: 2, kind: .tick, remaining: duration - 5_000_000, at: t + 6_000_000),
            FleetHistory.Event(observer: 2, kind: .finished, remaining: 0, at: t + UInt64(duration) + 2_000_000),
        ]]
        return FleetKeyJudge(calls: [start, attach], cleanup: nil, events: events, killed: [1: t + 1_000_000], bound: 100_000_000)
    }

    @Test("a killed member's start that never said when it began explains another member's attach")
    func killedStartExplainsAttach() throws {
        // Before: a call with no instant of its own was taken to begin after every call that
        // returned, so no order let the attach find its countdown (CI: "no order of the calls
        // explains their answers").
        let finding = try #require(Self.handedOver(startScheduled: Self.t).judge())
        #expect(finding.violations.isEmpty, "\(finding.violations)")
        #expect(finding.owed == 1 && finding.heard == 1)
    }

    @Test("a start asked for only after the attach returned explains nothing")
    func laterStartExplainsNothing() {
        #expect(Self.handedOver(startScheduled: Self.t + 7_000_000).judge() == nil)
    }

    @Test("the finish is judged against the earliest the unsaid start can have begun")
    func earlyFinishAgainstScheduledStart() throws {
        // The finish 200 ms before the deadline of a start made at the instant it was asked for:
        // no start the member can have made explains it.
        var judge = Self.handedOver(startScheduled: Self.t)
        var events = judge.events
        events[2]![1] = FleetHistory.Event(observer: 2, kind: .finished, remaining: 0, at: Self.t + UInt64(Self.duration) - 200_000_000)
        judge = FleetKeyJudge(calls: judge.calls, cleanup: nil, events: events, killed: judge.killed, bound: judge.bound)
        let finding = try #require(judge.judge())
        #expect(finding.early == 1, "\(finding.violations)")
    }
}
