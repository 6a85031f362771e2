import Countdown
import CountdownSupport
import Foundation

/// `countdown-bench list`: every backend's name, mechanism and declared profile.
struct ListCommand {
    static let usage = """
        USAGE: countdown-bench list [--backend NAME] [--format text|json]

        Prints each backend's mechanism, its threads, and what it declares: whether a frozen
        process makes it finish late, whether a wall-clock change moves it, whether its finish
        error grows with the length, whether a slow observer stalls the other countdowns, its
        capacity, its maximum duration, and its tolerance (how late a tick may come by design so
        that ticks due close together share a wake-up). The conformance suite checks these declarations; the benchmark
        measures them.

        OPTIONS:
          --backend NAME        \(CountdownBackend.names.joined(separator: ", ")), or all (default).
          --format text|json    text (default) or a JSON array.
        """

    let backends: [CountdownBackend]
    let format: String
    let showHelp: Bool

    init(arguments: [String]) throws(UsageError) {
        var args = Arguments(arguments, subcommand: "list")
        showHelp = args.flag("-h", "--help")
        let list = try args.value("--backend") ?? "all"
        // Listing reads declarations only, so the Redis strategies (chosen by name elsewhere) are
        // listed with every other backend.
        backends = try CountdownBackend.select(list, includingTests: true) + (list == "all" ? CountdownBackend.fleet : [])
        format = try args.choice("--format", in: ["text", "json"]) ?? "text"
        try args.finish()
    }

    func run(_ output: inout StandardStreams) throws -> Int32 {
        if showHelp {
            output.write(Self.usage + "\n")
            return 0
        }
        // Default options: the profile a user gets without configuring anything, as each
        // backend declares it (no scheduler is made).
        let profiles = try backends.map { try $0.profile() }
        output.write(format == "json" ? try json(profiles) : text(profiles))
        return 0
    }

    private func text(_ profiles: [CountdownProfile]) -> String {
        var table = TextTable(columns: [
            "backend", "suspended process", "wall-clock change", "drift", "slow observer", "capacity", "max duration",
            "tolerance",
        ])
        for p in profiles {
            table.add([
                p.displayName, p.suspension.rawValue, p.wallClockJump.rawValue, p.drift.rawValue,
                p.slowObserver.rawValue, p.capacity.map(String.init) ?? "unlimited", p.maximumDuration.text,
                p.tolerance == .zero ? "none" : p.tolerance.text,
            ])
        }
        var out = table.render()
        for p in profiles {
            out += "\n\(p.displayName)\n  mechanism  \(p.mechanism)\n  threads    \(p.threads)\n"
        }
        return out
    }

    private func json(_ profiles: [CountdownProfile]) throws -> String {
        let records = profiles.map(ProfileRecord.init)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(records), as: UTF8.self) + "\n"
    }
}

/// A profile as JSON: durations in seconds.
struct ProfileRecord: Codable {
    let name: String
    let variant: String?
    let mechanism: String
    let threads: String
    let suspension: String
    let wallClockJump: String
    let drift: String
    let slowObserver: String
    let capacity: Int?
    let maximumDurationSeconds: Double
    let toleranceSeconds: Double

    init(_ p: CountdownProfile) {
        name = p.name
        variant = p.variant
        mechanism = p.mechanism
        threads = p.threads
        suspension = p.suspension.rawValue
        wallClockJump = p.wallClockJump.rawValue
        drift = p.drift.rawValue
        slowObserver = p.slowObserver.rawValue
        capacity = p.capacity
        maximumDurationSeconds = p.maximumDuration.seconds
        toleranceSeconds = p.tolerance.seconds
    }

    /// Written out in full: a missing `capacity` would read as "unknown", not "unlimited".
    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(variant, forKey: .variant)
        try c.encode(mechanism, forKey: .mechanism)
        try c.encode(threads, forKey: .threads)
        try c.encode(suspension, forKey: .suspension)
        try c.encode(wallClockJump, forKey: .wallClockJump)
        try c.encode(drift, forKey: .drift)
        try c.encode(slowObserver, forKey: .slowObserver)
        try c.encode(capacity, forKey: .capacity)
        try c.encode(maximumDurationSeconds, forKey: .maximumDurationSeconds)
        try c.encode(toleranceSeconds, forKey: .toleranceSeconds)
    }
}
