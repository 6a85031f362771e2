import Countdown
import CountdownConformance
import CountdownSupport
import Foundation
import Testing

/// What a backend declares about a frozen process, judged by the suite for any backend: the
/// test binary runs itself again as a child process (the helper-process pattern), which the
/// suite freezes with SIGSTOP. A tick counter that claims to keep its deadline is rejected.
@Suite("Suspension claims", .serialized, .dedicatedThread,
       .enabled(if: ThreadSanitizer.acquire == nil, "the workers are child processes; the sanitizer's reports there go unread"))
struct SuspensionClaimTests {
    static let claims: [(name: String, make: CountdownConformance.Factory, isFalse: Bool)] = [
        ("timestamp(continuous)", { e in try TimestampScheduler(tickInterval: e.tickInterval, clock: .continuous, deliveryQueue: e.deliveryQueue) }, false),
        ("dispatch-source", { e in try dispatchSource(e) }, false),
        ("a tick counter declared to keep its deadline", { e in MisdeclaredProfile(try dispatchSource(e)) { $0.suspension = .keepsDeadline } }, true),
        ("a clock reader declared late by the freeze", { e in
            MisdeclaredProfile(try TimestampScheduler(tickInterval: e.tickInterval, clock: .continuous, deliveryQueue: e.deliveryQueue)) {
                $0.suspension = .finishesLateByFreeze
            }
        }, true),
    ]

    static var inChild: Bool { ProcessInfo.processInfo.environment[CountdownConformance.suspensionWorkerVariable] != nil }

    @Test("a frozen child process does what the backend declares", .runsAlone, arguments: claims.indices)
    func frozenChild(_ index: Int) {
        let claim = Self.claims[index]
        let suite = CountdownConformance(name: claim.name, makeScheduler: claim.make)
        let result = suite.suspension(relaunch: .swiftTesting("SuspensionClaimTests/frozenChild"))
        guard !Self.inChild else { return }  // a case whose worker runs elsewhere
        print("suspension claim of \(claim.name): \(result.verdict.rawValue) — \(result.figure ?? "") \(result.messages)")
        if claim.isFalse {
            #expect(result.verdict == .fail, "\(claim.name): the false claim passed: \(result.figure ?? "")")
            #expect(result.messages.contains { $0.contains("declares") }, "\(result.messages)")
        } else {
            #expect(result.verdict == .pass, "\(claim.name): \(result.verdict.rawValue) \(result.messages) \(result.figure ?? "")")
        }
    }

    @Test("in virtual time the suspension check is not applicable, and says why: no child is started")
    func virtualTimeIsNotApplicable() {
        guard !Self.inChild else { return }
        let suite = CountdownConformance(name: "virtual") { e in try VirtualScheduler(tickInterval: e.tickInterval, deliveryQueue: e.deliveryQueue) }
        // A relaunch that would run nothing: had a child been started, the check would fail.
        let result = suite.suspension(relaunch: .swiftTesting("NoSuchTestAnywhere"))
        #expect(result.verdict == .notApplicable, "\(result.verdict.rawValue) \(result.messages)")
        #expect(result.messages.first?.contains("virtual time") == true, "\(result.messages)")
    }

    @Test("a relaunch that runs no worker fails, and says why", .runsAlone)
    func relaunchRunningNothing() {
        guard !Self.inChild else { return }
        let suite = CountdownConformance(name: "no worker") { e in try dispatchSource(e) }
        let result = suite.suspension(relaunch: .swiftTesting("NoSuchTestAnywhere"))
        #expect(result.verdict == .fail)
        #expect(result.messages.first?.contains("never ticked twice") == true, "\(result.messages)")
    }
}
