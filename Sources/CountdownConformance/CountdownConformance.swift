import Countdown
import CountdownSupport
import Dispatch
import Foundation

/// The contract of `CountdownScheduler`, as checks any backend can be run against — including
/// one written outside this package:
///
/// ```swift
/// let suite = CountdownConformance(name: "my-backend") { environment in
///     try MyScheduler(tickInterval: environment.tickInterval, queue: environment.deliveryQueue)
/// }
/// let report = suite.run()
/// print(report)            // one line per check; every failure's messages
/// assert(report.passed)
/// ```
///
/// Each check gets fresh schedulers from the factory, with the tick interval and delivery queue
/// the check chooses, and compares what it observes with the contract and with the backend's
/// declared `CountdownProfile`. Every failure is reported, not only the first. A check runs on a
/// thread of its own under a watchdog: a backend that hangs fails the check instead of hanging
/// the caller. No test framework is involved, so Swift Testing, XCTest and the command line can
/// all drive it; `run` blocks the calling thread.
public struct CountdownConformance: Sendable {
    /// What the suite hands the factory for each scheduler it needs.
    public struct Environment: Sendable {
        /// Use this tick interval.
        public let tickInterval: Duration
        /// Deliver on this queue; the suite holds it, marks it and checks callbacks run on it.
        public let deliveryQueue: DispatchQueue
        /// A wall clock the suite can move: a backend that reads the wall clock should read
        /// this one, so the wall-clock profile can be observed without touching the machine.
        public let wallClock: CountdownClock
        /// Where a fleet backend (profile sharing `.fleet`) keeps its countdowns: new for each
        /// scheduler a check makes, so that checks and schedulers never see each other's; the
        /// same for two schedulers that a fleet check makes to share countdowns. A backend that
        /// keeps its countdowns in its own memory ignores it.
        public let namespace: String
        /// Where a fleet backend reaches its shared store (`host:port`) when the suite says so:
        /// in a fleet check's member process, the store of ``Fleet/store``, or the suite's
        /// ``FaultProxy`` in front of it. Nil: the backend's own. A factory of a fleet backend
        /// connects here when it is given, or the fault checks cannot reach it (they then say so).
        public let storeAddress: String?

        init(tickInterval: Duration, deliveryQueue: DispatchQueue, wallClock: CountdownClock, namespace: String, storeAddress: String? = nil) {
            self.tickInterval = tickInterval
            self.deliveryQueue = deliveryQueue
            self.wallClock = wallClock
            self.namespace = namespace
            self.storeAddress = storeAddress
        }
    }

    /// How the fleet checks that run members in processes of their own start them, and where
    /// the fleet keeps its countdowns.
    public struct Fleet: Sendable {
        /// How a member process is started: this test binary (or executable) again, running a
        /// test that runs this suite; in it, the suite's first call serves as the member.
        public var relaunch: Relaunch
        /// How many members race (2 to 4).
        public var members: Int
        /// The store the fleet shares (`host:port`): the members connect to it, and the fault
        /// check puts its proxy in front of it. Nil: the members use the factory's own, and
        /// the fault check does not apply.
        public var store: String?
        /// How many keys each trial races on.
        public var keys: Int

        /// Members started by `relaunch`, `members` of them (clamped to 2…4), sharing `store`,
        /// racing on `keys` keys a trial (at least 1).
        public init(relaunch: Relaunch, members: Int = 3, store: String? = nil, keys: Int = 40) {
            self.relaunch = relaunch
            self.members = min(max(members, 2), 4)
            self.store = store
            self.keys = max(keys, 1)
        }
    }

    /// Makes a fresh scheduler of the backend under test for what a check hands it.
    public typealias Factory = @Sendable (Environment) throws -> any CountdownScheduler

    /// How the suite runs: the randomized check's seed and length, each check's time limit,
    /// and how fleet members are started.
    public struct Options: Sendable {
        /// Seeds the randomized check; print it to replay a failure.
        public var seed: UInt64
        /// Operations the randomized check performs.
        public var randomizedOperations: Int
        /// A check that has not finished by then fails as hung.
        public var timeLimitPerCheck: Duration
        /// Members in processes of their own, for the fleet checks that need them (nil: those
        /// checks do not apply).
        public var fleet: Fleet?

        /// Options: `seed`, `randomizedOperations`, `timeLimitPerCheck` and `fleet` are the
        /// properties of the same names. The seed is drawn at random unless given (print it to
        /// replay a failure).
        public init(
            seed: UInt64 = UInt64.random(in: 1...UInt64(UInt32.max)),
            randomizedOperations: Int = 2000,
            timeLimitPerCheck: Duration = .seconds(90),
            fleet: Fleet? = nil
        ) {
            self.seed = seed
            self.randomizedOperations = randomizedOperations
            self.timeLimitPerCheck = timeLimitPerCheck
            self.fleet = fleet
        }
    }

    /// Every check, contract first (a fleet's last), in the order `run()` runs them.
    public static let checks: [ConformanceCheck] = ContractChecks.all + StoreChecks.all + FleetChecks.all + ProfileChecks.all

    /// The checks of a fleet (two schedulers sharing their countdowns): not applicable to a
    /// backend whose countdowns are its own.
    public static let fleetChecks: [ConformanceCheck] = FleetChecks.all

    /// The environment variable that makes a process started by a fleet check a member of the
    /// trial of the suite it names: there the suite's first call (``run(only:concurrency:)``,
    /// ``run(_:)``, ``suspension(relaunch:freeze:)``, ``fleetTrial(_:)``) serves as the member and
    /// never returns.
    public static let fleetMemberVariable = "COUNTDOWN_CONFORMANCE_FLEET_MEMBER"

    /// Whether this process was started as a member of a fleet check's trial.
    public static var isFleetMember: Bool { ProcessInfo.processInfo.environment[fleetMemberVariable] != nil }

    /// The backend's name, as reports show it.
    public let name: String
    /// How the suite runs.
    public let options: Options
    let factory: Factory

    /// A suite for one backend.
    ///
    /// - Parameters:
    ///   - name: the backend's name, as reports show it.
    ///   - options: how the suite runs.
    ///   - makeScheduler: makes a fresh scheduler for each check, from what the check hands it.
    public init(name: String, options: Options = Options(), makeScheduler: @escaping Factory) {
        self.name = name
        self.options = options
        self.factory = makeScheduler
    }

    /// Runs every check (or those whose id is in `only`), up to `concurrency` contract checks at
    /// a time; the profile checks after them, one at a time. The report lists them in the
    /// suite's order.
    public func run(only ids: Set<String>? = nil, concurrency: Int = 1) -> ConformanceReport {
        FleetMember.serveIfAsked(name: name, factory: factory)
        let selected = Self.checks.filter { ids?.contains($0.id) ?? true }
        guard concurrency > 1 else { return ConformanceReport(backend: name, results: selected.map(run)) }
        // A profile check measures timing on this machine: beside another check (eight threads
        // of calls, a thousand countdowns) it would measure that check's load as the backend's.
        let results = Locked<[String: CheckResult]>([:])
        let together = selected.filter { $0.kind != .profile }
        let slots = DispatchSemaphore(value: concurrency)
        let finished = DispatchSemaphore(value: 0)
        for check in together {
            slots.wait()
            OSThreads.start("conformance") {
                let result = self.run(check)
                results.withLock { $0[check.id] = result }
                slots.signal()
                finished.signal()
            }
        }
        for _ in together { finished.wait() }
        for check in selected where check.kind == .profile {
            let result = run(check)
            results.withLock { $0[check.id] = result }
        }
        let byID = results.withLock { $0 }
        return ConformanceReport(backend: name, results: selected.compactMap { byID[$0.id] })
    }

    /// Runs one `check` on a thread of its own, under the watchdog.
    public func run(_ check: ConformanceCheck) -> CheckResult {
        FleetMember.serveIfAsked(name: name, factory: factory)
        let context = CheckContext(check: check, suite: name, options: options, factory: factory)
        let done = DispatchSemaphore(value: 0)
        let started = DispatchTime.now()
        // A thread of its own: whatever a backend does to libdispatch's shared pool, the check
        // keeps time. Its name is what threads started by the backend inherit until they name
        // themselves, which keeps them apart from libdispatch's workers ("…qos…").
        OSThreads.start("conformance") {
            context.execute()
            done.signal()
        }
        // The watchdog allows the check its time limit, plus what it spent waiting for a turn it
        // does not control (a fleet trial waits for the one before it).
        let began = DispatchTime.now()
        var allowed = options.timeLimitPerCheck
        while done.wait(timeout: began + .nanoseconds(Int(allowed.nanoseconds))) == .timedOut {
            let now = options.timeLimitPerCheck + context.excused
            if now <= allowed {
                context.fail("hung: no result after \(options.timeLimitPerCheck) (a deadlock, or a wait that never ends)")
                context.abandon()
                break
            }
            allowed = now
        }
        return context.result(seconds: Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9)
    }
}

extension CountdownConformance {
    /// Runs `trial`, a fleet trial of this suite's backend (members started as ``Options/fleet`` says)
    /// and judges it: what the benchmark runs at scale, and the fleet checks in small.
    public func fleetTrial(_ trial: FleetTrial) throws -> FleetTrialReport {
        FleetMember.serveIfAsked(name: name, factory: factory)
        guard let fleet = options.fleet else {
            throw FleetTrial.TrialError(description: "a fleet trial needs Options.fleet: how to start its members")
        }
        return try trial.run(suite: name, relaunch: fleet.relaunch)
    }
}
