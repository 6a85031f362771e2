import CountdownConformance
import Foundation

/// What `countdown-bench fleet` measured, as written to `fleet.json`: the typed document the
/// text report and the guide are rendered from.
struct FleetDocument: Codable, Sendable {
    static let fileName = "fleet.json"

    var machine: Machine
    /// `redis-server --version`'s version, and where it ran.
    var redis: String
    var scale: [ScaleRow]
    var expiry: [ExpiryRow]
    /// What a fleet keeps, through races and faults (``FleetPromises``).
    var promises: [PromiseRow]
    /// `redis(zset)` over S shards on a Redis Cluster (``FleetShards``); nil in a document
    /// written before the shards were measured.
    var shards: [ShardRow]?
    /// `redis(zset)` called by C tasks at once on the cooperative pool (``FleetServers``); nil in
    /// a document written before servers were measured.
    var servers: [ServerRow]?
    /// A master SIGKILLed under `redis(zset*3)`, with and without starts acknowledged by a replica
    /// (``FleetFailover``); nil in a document written before failovers were measured.
    var failover: [FailoverRow]?

    /// One run of `redis(zset)` at scale: N countdowns started pipelined over one tick.
    struct ScaleRow: Codable, Sendable, Equatable {
        var countdowns: Int
        var durationMs: Double
        var tickMs: Double
        var started: Int
        var finished: Int
        /// How long the pipelined starts took, all of them.
        var startPhaseMs: Double
        /// Finish lateness after the deadline (from the start call's own instant), ms.
        var finishP50Ms: Double?
        var finishP99Ms: Double?
        var finishMaxMs: Double?
        var tickP99Ms: Double?
        var events: Int
        /// CPU of this process per delivered event (µs), and of redis-server when it is ours.
        var cpuPerEventMicros: Double?
        var redisCPUPerEventMicros: Double?
        /// Redis' `used_memory` at the end of the starts, less before, per countdown alive then.
        var redisBytesPerCountdown: Double?
        /// The server's time in the scripts run during the start phase (`INFO commandstats`,
        /// `evalsha`: the start scripts, and the claims made meanwhile), per countdown started.
        var luaMicrosPerStart: Double?
        /// One call each, medians over `calls`: a start, a cancel, and a PING in the same minutes.
        var calls: Int
        var startMedianMicros: Double
        var cancelMedianMicros: Double
        var pingMedianMicros: Double
    }

    /// A thousand countdowns due over 1–2 s beside `idleKeys` keys with a one-hour TTL: what
    /// each Redis strategy heard, and how late.
    struct ExpiryRow: Codable, Sendable, Equatable {
        var strategy: String
        var idleKeys: Int
        var countdowns: Int
        var heard: Int
        /// How long the row waited after the last deadline.
        var waitedSeconds: Double
        var finishP50Ms: Double?
        var finishP99Ms: Double?
        var finishMaxMs: Double?
    }

    /// A fleet trial (members in processes of their own, racing on keys, with a fault between
    /// them), judged as the conformance suite judges it, summed over its rounds.
    struct PromiseRow: Codable, Sendable, Equatable {
        /// `race`, `race-killed`, `cancel-pairs`, `claim-answers-dropped`, `clients-killed`, `redis-restarted`.
        var name: String
        /// What was done, in words.
        var title: String
        var strategy: String
        var rounds: Int
        var report: FleetTrialReport
    }

    /// N countdowns started pipelined, their namespace over `shards` hash tags, on a Redis
    /// Cluster of `nodes` masters of the benchmark's own.
    struct ShardRow: Codable, Sendable, Equatable {
        var shards: Int
        var nodes: Int
        var countdowns: Int
        var started: Int
        var startPhaseMs: Double
        /// Each master's CPU (user and system, from `/proc`) per start, µs: the scripts, and
        /// the odd heartbeat claim.
        var redisCPUPerStartMicros: [Double]
        /// Each master's share of the scripts run (`INFO commandstats`, `evalsha`), 0 to 1.
        var scriptShare: [Double]

        var startsPerSecond: Double { startPhaseMs > 0 ? Double(started) / (startPhaseMs / 1000) : 0 }
        /// What the cluster could start a second if each master had a core of its own: the busiest
        /// master's CPU per start sets it.
        var ceilingPerSecond: Double? {
            guard let busiest = redisCPUPerStartMicros.max(), busiest > 0 else { return nil }
            return 1_000_000 / busiest
        }
    }

    /// C tasks on the cooperative pool, each a run of requests (a start, then a cancel), through
    /// the async calls or the blocking ones, beside a heartbeat task sleeping 5 ms at a time.
    struct ServerRow: Codable, Sendable, Equatable {
        /// `async` or `blocking`.
        var api: String
        var tasks: Int
        var requests: Int
        var seconds: Double
        /// Two calls a request.
        var callsPerSecond: Double
        var requestP50Ms: Double?
        var requestP99Ms: Double?
        /// How many times the heartbeat woke, and how late after its 5 ms.
        var heartbeats: Int
        var heartbeatP99Ms: Double?
        var heartbeatMaxMs: Double?
    }

    /// One strategy through a master's SIGKILL: what a start cost before, what the run lost.
    struct FailoverRow: Codable, Sendable, Equatable {
        var strategy: String
        /// The killed master's replica: `in step`, or `behind` (stopped from the run's start until
        /// the kill, the master set to cut it off past 64 kB of output, and cutting it off after
        /// 32 MB of ballast).
        var replica: String
        /// Replicas each start waited for (0: none), and for how long at most.
        var replicas: Int
        var waitMs: Double?
        /// One at a time on the healthy cluster, µs: a start, and a `PING` beside it.
        var startMedianMicros: Double?
        var startP99Micros: Double?
        var pingMedianMicros: Double?
        /// Starts asked for while the master was killed; answered `.started`; that threw (any
        /// reason), of which `notReplicated`.
        var attempted: Int
        var started: Int
        var threw: Int
        var notReplicated: Int
        /// From the kill until every node served its slots again.
        var failoverSeconds: Double?
        /// Observers ended because their countdown was gone from Redis (`lostCountdowns`); owed
        /// finishes never heard; heard before the deadline; heard twice.
        var lost: Int
        var unheard: Int
        var early: Int
        var doubled: Int
        /// Lateness of the finishes due a second or more after the cluster served again, where
        /// the lost ones are ended.
        var finishP99MsAfterFailover: Double?
        var finishMaxMsAfterFailover: Double?
    }

    func encoded() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self) + "\n"
    }
}
