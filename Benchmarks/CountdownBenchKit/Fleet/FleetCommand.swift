import CountdownRedis
import Foundation
#if Redis
import Countdown
#endif

/// `countdown-bench fleet`: the Redis strategies measured where one process is not enough.
struct FleetCommand {
    static let usage = """
        USAGE: countdown-bench fleet [--redis URL] [--namespace NAME] [--parts P,…] [--counts N,…] [--idle N,…]
                                     [--tasks C,…] [--quick] [--output DIR] [--no-progress]

        Measures the Redis strategies (a build with the Redis trait: swift build --traits Redis),
        each part on a redis-server of its own on a free loopback port, or on --redis's (there no
        redis-server CPU is reported, and part 4 and the cases that restart Redis or close its
        clients are left out):
          1. redis(zset) at scale: N countdowns of 3 s at 1 s ticks (default 100000 and 1000000),
             started pipelined over one tick: finish and tick lateness, start phase, CPU per event
             of this process and of redis-server, Redis memory per countdown; then a start and a
             cancel one call at a time beside a PING.
          2. Expiry beside idle keys: 1000 countdowns due over 1-2 s beside 0, 10000, 100000 and
             1000000 keys with a one-hour TTL, on each strategy: how many finishes were heard
             within 30 s of the last deadline, and how late.
          3. What a fleet keeps: members in processes of their own (this executable again, as
             `conformance` starts them) race start, attach, cancel, pause and resume on the same
             keys within a millisecond, judged as the conformance suite judges a fleet: 4
             processes on 2000 keys; the same with one killed by SIGKILL, 5 rounds; start and
             cancel 0-1 ms apart, 300 pairs; every claim's answer dropped before it is read, 100
             countdowns; CLIENT KILL TYPE normal every 200 ms for 3 s; Redis SIGKILLed and
             restarted from its append-only file (these two on our own server only). Doubled, early and lost
             finishes, late ticks to replaced observers, observers held at the end.
          4. redis(zset) over 1, 2 and 3 shards on a Redis Cluster of three masters of its own
             (not with --redis): 100000 starts pipelined (10000 with --quick); starts a second,
             each master's CPU per start and share of the scripts, and what the cluster could
             start a second with a core per master.
          5. redis(zset) called as servers call it: C tasks at once on Swift's cooperative pool
             (default 1, 16, 256, 1024), 20000 requests (4000 with --quick), each a start then a
             cancel, through the async calls and through the blocking ones: calls a second,
             request p50/p99, and how late a task sleeping 5 ms at a time on the same pool woke.
          6. A master SIGKILLed (not with --redis): redis(zset*3) on a Redis Cluster of three
             masters with a replica each, without and with starts acknowledged by a replica
             (WAIT 1, 100 ms): a start one at a time beside a PING, then 16 threads starting
             countdowns of 6-8 s for 3 s, master 1 killed halfway, its replica in step or behind
             (stopped from the start until the kill, and cut off by its master after 32 MB of
             ballast): starts lost, ended and counted
             (lostCountdowns), unheard, early, doubled, and how late the finishes came.

        OPTIONS:
        \(RedisArguments.help)
          --parts P,…           Which parts to run (default 1,2,3,4,5,6).
          --counts N,…          Countdowns of part 1 (default 100000,1000000).
          --idle N,…            Idle keys of part 2 (default 0,10000,100000,1000000).
          --tasks C,…           Tasks at once of part 5 (default 1,16,256,1024).
          --quick               Small: 10000 countdowns, idle 0 and 10000 with a 10 s wait, part 3 small.
          --output DIR          Also write DIR/fleet.json and DIR/fleet.txt (release builds only);
                                {machine} in DIR becomes this machine's folder name.
          --no-progress         No progress lines on stderr.

        EXIT STATUS: 0 measured, and every fleet case kept its promises; 1 a part could not run (no
        redis-server, say), or redis(zset) broke a promise in part 3; 2 bad arguments.
        """

    let parts: Set<Int>
    let counts: [Int]
    let tasks: [Int]
    let idle: [Int]
    let quick: Bool
    let outputDirectory: String?
    let showProgress: Bool
    let showHelp: Bool
    let redis: RedisArguments

    init(arguments: [String]) throws(UsageError) {
        var args = Arguments(arguments, subcommand: "fleet")
        showHelp = args.flag("-h", "--help")
        showProgress = !args.flag("--no-progress")
        quick = args.flag("--quick")
        redis = try RedisArguments(&args)
        counts = try Self.list(args.value("--counts"), option: "--counts") ?? (quick ? [10_000] : [100_000, 1_000_000])
        parts = Set(try Self.list(args.value("--parts"), option: "--parts") ?? [1, 2, 3, 4, 5, 6])
        guard parts.isSubset(of: 1...6) else { throw UsageError("--parts must name parts 1 to 6, not \(parts.sorted())") }
        tasks = try Self.list(args.value("--tasks"), option: "--tasks") ?? (quick ? [1, 256] : [1, 16, 256, 1024])
        idle = try Self.list(args.value("--idle"), option: "--idle", allowingZero: true) ?? (quick ? [0, 10_000] : [0, 10_000, 100_000, 1_000_000])
        outputDirectory = try args.value("--output").map(Machine.expand)
        try args.finish()
        if outputDirectory != nil, !Machine.isReleaseBuild {
            throw UsageError("--output writes results, which come from a release build: swift run -c release countdown-bench …")
        }
        try redis.use()
    }

    private static func list(_ text: String?, option: String, allowingZero: Bool = false) throws(UsageError) -> [Int]? {
        guard let text else { return nil }
        let numbers = text.split(separator: ",").map { Int($0) }
        guard !numbers.isEmpty, numbers.allSatisfy({ $0 != nil && $0! >= (allowingZero ? 0 : 1) }) else {
            throw UsageError("\(option) must be a comma list of whole numbers, not '\(text)'")
        }
        return numbers.map { $0! }
    }

    func run(_ output: inout StandardStreams) throws -> Int32 {
        if showHelp {
            output.write(Self.usage + "\n")
            return 0
        }
        #if Redis
        let progress: (String) -> Void = { [showProgress] line in
            if showProgress { FileHandle.standardError.write(Data("fleet: \(line)\n".utf8)) }
        }
        let named = try redis.endpoint()
        defer { RedisArguments.leaveServerAsFound() }
        var document = FleetDocument(machine: .current, redis: "", scale: [], expiry: [], promises: [])
        for count in counts where parts.contains(1) {
            let server = try RedisUnderTest(named: named)
            document.redis = "Redis \(server.version()) on \(server.isOwn ? "a loopback redis-server of the benchmark's own" : server.endpoint.description)"
            document.scale.append(try FleetExperiments.scale(
                count: count, duration: .seconds(3), tick: .seconds(1), calls: 2000, server: server, progress: progress))
        }
        for idleKeys in idle where parts.contains(2) {
            let server = try RedisUnderTest(named: named)
            document.expiry += try FleetExperiments.expiry(
                idle: idleKeys, countdowns: 1000, wait: quick ? .seconds(10) : .seconds(30), server: server, progress: progress)
        }
        if parts.contains(3) {
            // A real redis-server with an append-only file, fsynced every second, as a fleet runs one.
            let server = try RedisUnderTest(named: named, settings: ["--appendonly", "yes", "--appendfsync", "everysec"])
            document.promises = try FleetPromises.measure(sizes: quick ? .quick : .init(), server: server, progress: progress)
        }
        if parts.contains(5) {
            let server = try RedisUnderTest(named: named, settings: ["--appendonly", "yes", "--appendfsync", "everysec"])
            if document.redis.isEmpty {
                document.redis = "Redis \(server.version()) on \(server.isOwn ? "a loopback redis-server of the benchmark's own" : server.endpoint.description)"
            }
            document.servers = try FleetServers.measure(concurrency: tasks, requests: quick ? 4000 : 20_000, server: server, progress: progress)
        }
        if named == nil, parts.contains(4) {
            document.shards = try FleetShards.measure(count: quick ? 10_000 : 100_000, shards: [1, 2, 3], progress: progress)
        }
        if named == nil, parts.contains(6) {
            document.failover = try FleetFailover.measure(sizes: quick ? .init(costCalls: 200, threads: 8, seconds: 2) : .init(), progress: progress)
        }
        let text = FleetReport(document: document).text
        output.write(text)
        if let directory = outputDirectory {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try text.write(toFile: "\(directory)/fleet.txt", atomically: true, encoding: .utf8)
            try document.encoded().write(toFile: "\(directory)/\(FleetDocument.fileName)", atomically: true, encoding: .utf8)
            progress("wrote \(directory)/fleet.txt and fleet.json")
        }
        let broken = document.promises.filter { $0.strategy == "redis(zset)" && !$0.report.passed }
        if !broken.isEmpty {
            output.writeError("countdown-bench fleet: redis(zset) broke a promise in \(broken.map(\.name).joined(separator: ", "))\n")
            return 1
        }
        return 0
        #else
        output.writeError("countdown-bench: fleet measures the Redis strategies, which this build leaves out: build with swift build --traits Redis\n")
        return 1
        #endif
    }
}
