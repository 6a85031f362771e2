/// The calls a fleet trial makes: for each key, a few calls from different members within a
/// millisecond of one another (a race), in one of a few scenarios; keys' races spread over a
/// window. Seeded: the same seed plans the same calls.
public struct FleetWorkload: Sendable {
    /// What races on one key.
    public enum Scenario: String, Sendable, CaseIterable {
        /// Two or three members start the key at once: one starts, the others attach.
        case attach
        /// One member starts the key while another cancels it.
        case cancel
        /// One member starts the key; another pauses it while a third attaches; one resumes it.
        case pause
        /// Three or four calls of any kind from any members.
        case mixed
        /// One member starts the key, and nothing races it: a countdown to finish.
        case alone

        /// The scenarios that race.
        public static let racing: [Scenario] = [.attach, .cancel, .pause, .mixed]
    }

    /// One call a member is to make.
    public struct Call: Sendable {
        /// Unique in the workload; the history's call has the same id.
        public let id: Int
        /// The member (0-based) that makes it.
        public let member: Int
        /// The countdown's key.
        public let key: String
        /// Which call.
        public let operation: FleetHistory.Call.Operation
        /// The countdown's duration for a start, in nanoseconds.
        public let duration: Int64
        /// Nanoseconds after the trial's start.
        public let offset: Int64
    }

    /// Every call, in the order they are due.
    public let calls: [Call]
    /// The keys the calls race on.
    public let keys: [String]
    /// Every countdown's duration (nanoseconds).
    public let duration: Int64
    /// When the last call is made, after the trial's start.
    public var lastOffset: Int64 { calls.map(\.offset).max() ?? 0 }

    /// `keys` races among `members`, spread over `spread`, each countdown lasting `duration`:
    /// the `scenarios` drawn from `seed`, on keys that begin with `keyPrefix`.
    public static func races(
        keys count: Int, members: Int, spread: Duration, duration: Duration, scenarios: [Scenario] = Scenario.racing,
        seed: UInt64, keyPrefix: String = "rate-limit:user:"
    ) -> FleetWorkload {
        var random = SplitMix(seed: seed)
        var calls: [Call] = []
        var keys: [String] = []
        let window = max(spread.nanoseconds, 1)
        func jitter() -> Int64 { Int64(random.below(1_000_000)) }
        for index in 0..<count {
            // Keys like real ones (20–32 bytes): a heap string, as a service's are.
            let key = keyPrefix + String(100_000_000 + index * 7919 % 100_000_000) + "-\(index)"
            keys.append(key)
            let at = window * Int64(index) / Int64(max(count, 1))
            var order = Array(0..<members)
            for i in stride(from: order.count - 1, to: 0, by: -1) { order.swapAt(i, random.below(i + 1)) }
            func member(_ n: Int) -> Int { order[n % order.count] }
            func add(_ who: Int, _ operation: FleetHistory.Call.Operation, _ offset: Int64) {
                calls.append(Call(id: calls.count + 1, member: who, key: key, operation: operation,
                                  duration: duration.nanoseconds, offset: offset))
            }
            switch scenarios[random.below(scenarios.count)] {
            case .attach:
                add(member(0), .start, at + jitter())
                add(member(1), .start, at + jitter())
                if members > 2, random.below(2) == 0 { add(member(2), .start, at + jitter()) }
            case .cancel:
                add(member(0), .start, at + jitter())
                add(member(1), .cancel, at + jitter())
            case .pause:
                add(member(0), .start, at + jitter())
                add(member(1), .pause, at + jitter())
                add(member(2), .attach, at + jitter())
                add(member(random.below(2)), .resume, at + 1_000_000 + jitter())
            case .alone:
                add(member(0), .start, at)
            case .mixed:
                add(member(0), .start, at + jitter())
                let operations = FleetHistory.Call.Operation.allCases
                for n in 1..<(3 + random.below(2)) { add(member(n), operations[random.below(operations.count)], at + jitter()) }
            }
        }
        return FleetWorkload(calls: calls.sorted { $0.offset < $1.offset }, keys: keys, duration: duration.nanoseconds)
    }

    /// The same workload, then `count` keys handed over: `member` starts each, and another
    /// member attaches to it 5 ms later, after every race. Killed after these, `member` leaves
    /// countdowns that only others observe, due after everything else: nobody's own deadline
    /// claims them, only a member that looks after the whole fleet does. The other member is
    /// one of `members`; the keys begin with `keyPrefix`.
    public func handingOver(_ count: Int, from member: Int, members: Int, keyPrefix: String = "sms-code:+86138") -> FleetWorkload {
        var calls = self.calls
        var keys = self.keys
        let after = lastOffset + 5_000_000
        for index in 0..<count {
            let key = keyPrefix + String(10_000_000 + index) + "-handed-over"
            keys.append(key)
            let at = after + Int64(index) * 2_000_000
            let other = (member + 1 + index % max(members - 1, 1)) % members
            calls.append(Call(id: calls.count + 1, member: member, key: key, operation: .start, duration: duration, offset: at))
            calls.append(Call(id: calls.count + 1, member: other, key: key, operation: .attach, duration: duration, offset: at + 5_000_000))
        }
        return FleetWorkload(calls: calls.sorted { $0.offset < $1.offset }, keys: keys, duration: duration)
    }
}
