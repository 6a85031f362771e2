import CountdownSupport
import Foundation

/// A fleet trial: members in processes of their own, each a scheduler from the
/// suite's factory on one namespace, making a workload of races, with faults between them (a
/// proxy in front of the store, a member killed). After the race it waits for every countdown
/// to run out, cancels what is left from one member, asks every living member how many
/// observers it still holds, and stops them. What happened is the history the judge reads.
public struct FleetTrial: Sendable {
    /// How many member processes race (each a scheduler of the suite's backend).
    public var members: Int
    /// The calls the members make, key by key.
    public var workload: FleetWorkload
    /// The members' tick interval.
    public var tick: Duration
    /// Where the members keep their countdowns: new for each trial.
    public var namespace: String
    /// What the members connect to (the proxy's address, or the store's); nil: their factory's own.
    public var storeAddress: String?
    /// The proxy the members connect through, and the fault it injects from the race until every
    /// countdown has run out.
    public var proxy: FaultProxy?
    /// The fault ``proxy`` injects; nil: it only forwards.
    public var fault: FaultProxy.Fault?
    /// A member killed with SIGKILL this long after the race began.
    public var kill: (member: Int, after: Duration)?
    /// Every connection through the proxy reset this long after the race began.
    public var resetAfter: Duration?
    /// What else happens to the fleet while the calls race (a server's clients dropped, the
    /// server restarted): each action at its instants after the race began.
    public var disruptions: [Disruption] = []

    /// Something done to the fleet from outside, `after` the race began, then every `every`
    /// until `until` (once, without `every`).
    public struct Disruption: Sendable {
        /// When it is done first, after the race began.
        public var after: Duration
        /// How often it is done again; nil: once.
        public var every: Duration?
        /// When it is done for the last time; nil: at `after`.
        public var until: Duration?
        /// What is done: a server's clients dropped, the server restarted.
        public var action: @Sendable () -> Void

        /// A disruption: `after`, `every`, `until` and `action` are the properties of the same names.
        public init(after: Duration, every: Duration? = nil, until: Duration? = nil, action: @escaping @Sendable () -> Void) {
            self.after = after
            self.every = every
            self.until = until
            self.action = action
        }

        /// Its instants, in nanoseconds after the race began.
        var instants: [Int64] {
            guard let every, every > .zero else { return [after.nanoseconds] }
            let last = (until ?? after).nanoseconds
            return Array(stride(from: after.nanoseconds, through: last, by: Int(every.nanoseconds)))
        }
    }
    /// How long after the last deadline the trial waits for finishes before it cancels what is left.
    public var grace: Duration = .seconds(3)
    /// The one-sided bound on a replaced, cancelled or paused observer's last tick.
    public var bound: Duration = FleetTrial.silence

    /// Once the call that replaced, cancelled or paused an observer in another member has
    /// returned, the observer hears nothing that begins later than this: one hop on a local
    /// network with a wide margin (on loopback the hop takes about a millisecond).
    public static let silence = Duration.milliseconds(100)

    /// A trial of `members` processes making `workload`'s calls at `tick`, on `namespace`;
    /// faults, kills and disruptions are set on the properties after.
    public init(members: Int, workload: FleetWorkload, tick: Duration, namespace: String) {
        self.members = members
        self.workload = workload
        self.tick = tick
        self.namespace = namespace
    }

    /// Why a trial could not be run (no member could be started, no fleet configured).
    public struct TrialError: Error, CustomStringConvertible {
        /// What went wrong, in one line.
        public let description: String
    }

    /// One trial at a time in a process: each starts processes of its own and judges one-sided
    /// bounds in real time, which trials beside one another on a small machine would make
    /// each other miss (seen: six at once on two cores, a tick 121 ms after its end).
    private static let oneAtATime = Locked(())

    /// Runs it with the suite named `suite`, started again as `relaunch` says, and judges it;
    /// `waiting` hears when it begins and ends waiting for its turn (a check's watchdog does not
    /// count that time).
    func run(suite: String, relaunch: CountdownConformance.Relaunch, waiting: (Bool) -> Void = { _ in }) throws
        -> FleetTrialReport
    {
        waiting(true)
        return try Self.oneAtATime.withLock { _ throws -> FleetTrialReport in
            waiting(false)
            return try runAlone(suite: suite, relaunch: relaunch)
        }
    }

    private func runAlone(suite: String, relaunch: CountdownConformance.Relaunch) throws -> FleetTrialReport {
        let history = Locked(FleetHistory())
        let setup = "\(namespace) \(tick.nanoseconds) \(storeAddress ?? "-")"
        var processes: [FleetMemberProcess] = []
        defer { for process in processes { process.quit(timeout: .seconds(5)) } }
        for index in 0..<members {
            processes.append(try FleetMemberProcess(index: index, suite: suite, relaunch: relaunch, setup: setup, history: history))
        }
        for process in processes where process.wait(for: "ready", timeout: .seconds(60)) == nil {
            let said = process.said.joined(separator: "; ")
            throw TrialError(description: "member \(process.index) never said it was ready (\(relaunch.executable) \(relaunch.arguments.joined(separator: " "))): it said \(said.isEmpty ? "nothing" : said); it printed: \(process.otherOutput)")
        }
        // The calls are sent first, to be made at their instants: members race on the clock, not
        // on when a line reaches them.
        let began = SystemClocks.monotonic() + 500_000_000
        history.withLock { h in
            for call in workload.calls {
                h.calls[call.id] = FleetHistory.Call(
                    id: call.id, member: call.member, key: call.key, operation: call.operation, duration: call.duration, isCleanup: false,
                    scheduled: began + UInt64(call.offset))
            }
        }
        proxy?.inject(fault)
        for call in workload.calls {
            processes[call.member].send("call \(call.id) \(call.operation.rawValue) \(call.duration) \(began + UInt64(call.offset)) \(call.key)")
        }
        var interruptions: [(at: UInt64, act: () -> Void)] = disruptions.flatMap { disruption in
            disruption.instants.map { (at: began + UInt64($0), act: disruption.action) }
        }
        if let kill {
            interruptions.append((began + UInt64(kill.after.nanoseconds), {
                processes[kill.member].killNow()
                history.withLock { $0.killed[kill.member] = SystemClocks.monotonic() }
            }))
        }
        if let resetAfter, let proxy { interruptions.append((began + UInt64(resetAfter.nanoseconds), { proxy.resetAll() })) }
        for (at, act) in interruptions.sorted(by: { $0.at < $1.at }) {
            SystemClocks.sleep(untilMonotonic: at)
            act()
        }
        let raceEnd = began + UInt64(workload.lastOffset)
        let killed = history.withLock { $0.killed }
        let living = processes.filter { killed[$0.index] == nil }
        let livingIDs = Set(living.map(\.index))
        _ = realTimeWait(timeout: .nanoseconds(Int64(raceEnd - min(raceEnd, SystemClocks.monotonic()))) + .seconds(30)) {
            history.withLock { h in !h.calls.values.contains { livingIDs.contains($0.member) && $0.returned == nil } }
        }
        // Every countdown has run out by then (a resume moves a deadline by the pause, which lasts
        // a millisecond or two); whatever is left is paused, or its finish was lost. The fault
        // lasts until then: the claims and the messages that deliver the finishes meet it too.
        SystemClocks.sleep(untilMonotonic: raceEnd + UInt64(workload.duration) + UInt64(grace.nanoseconds))
        proxy?.inject(nil)
        if let cleaner = living.first {
            var id = (workload.calls.map(\.id).max() ?? 0) + 1
            let now = SystemClocks.monotonic()
            for key in workload.keys {
                history.withLock {
                    $0.calls[id] = FleetHistory.Call(id: id, member: cleaner.index, key: key, operation: .cancel, duration: 0, isCleanup: true, scheduled: now)
                }
                cleaner.send("call \(id) cancel 0 \(now) \(key)")
                id += 1
            }
            _ = realTimeWait(timeout: .seconds(30)) {
                history.withLock { h in !h.calls.values.contains { $0.isCleanup && $0.returned == nil } }
            }
        }
        for process in living {
            let before = process.said.count
            process.send("census 5000")
            let line = process.wait(for: "C ", after: before, timeout: .seconds(20))
            let held = line.map { $0.split(separator: " ").dropFirst(2).compactMap { Int($0) } } ?? [-1]
            history.withLock { $0.held[process.index] = held }
        }
        var report = FleetJudge.report(history.withLock { $0 }, workload: workload, bound: UInt64(bound.nanoseconds))
        report.members = members
        report.faultsInjected = proxy?.faults ?? 0
        return report
    }
}
