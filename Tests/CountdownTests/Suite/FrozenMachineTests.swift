@testable import Countdown
@testable import CountdownBenchKit
import CountdownConformance
import CountdownSupport
import Testing

/// `attach` once failed the task backend in CI ("pause returned false", "remaining(key:) is nil
/// for a paused countdown"): six checks at once, one of them with 2000 countdowns on the same
/// two-thread cooperative pool, and the 4 s countdown the check meant to pause had already
/// finished, its wake-ups seconds late. A backend running late is not what these checks judge:
/// a countdown a check pauses, cancels or attaches to while it runs is a minute long now.
///
/// Shown here in virtual time: a correct backend on a machine that freezes for five seconds
/// right after the check starts one of the countdowns it will act on (the first advance after
/// the start lets five seconds more pass, as a process descheduled that long would find).
@Suite
struct FrozenMachineTests {
    /// The virtual scheduler, frozen for `freeze` at the first advance after a start of one of `keys`.
    final class FreezesAfterStart: InVirtualTime, @unchecked Sendable {
        let keys: Set<String>
        let freeze = Duration.seconds(5)
        private let frozen = Locked(false)

        init(_ inner: any CountdownScheduler, keys: Set<String>) {
            self.keys = keys
            super.init(inner)
        }

        override func start(key: String, duration: Duration, observer: @escaping CountdownObserver)
            throws(CountdownError) -> CountdownStart
        {
            let outcome = try inner.start(key: key, duration: duration, observer: observer)
            if keys.contains(key) { frozen.withLock { $0 = true } }
            return outcome
        }

        override func advance(by duration: Duration) throws {
            let extra = frozen.withLock { frozen in
                defer { frozen = false }
                return frozen ? freeze : .zero
            }
            try super.advance(by: duration + extra)
        }
    }

    /// Each check with the keys of the countdowns it acts on while they run (not those it waits out).
    static let acted: [(check: String, keys: Set<String>)] = [
        ("attach", ["paused"]),
        ("attach-only", ["sms", "paused"]),
        ("cancel", ["a", "b", "q"]),
        ("bad-input", ["running"]),
        ("calls-from-observer", ["from-observer:cancel", "from-observer:pause", "from-observer:replace"]),
        ("reentrancy", ["outer"]),
    ]

    @Test("a correct backend frozen for 5 s after a start passes the checks that act on that countdown", arguments: acted.map(\.check))
    func frozenAfterStart(_ id: String) throws {
        let keys = try #require(Self.acted.first { $0.check == id }).keys
        let check = try #require(CountdownConformance.checks.first { $0.id == id })
        let suite = CountdownConformance(name: "virtual, frozen after a start") { e in
            FreezesAfterStart(try VirtualScheduler(tickInterval: e.tickInterval, deliveryQueue: e.deliveryQueue), keys: keys)
        }
        let result = suite.run(check)
        #expect(result.verdict == .pass, "\(result.messages)")
    }
}
