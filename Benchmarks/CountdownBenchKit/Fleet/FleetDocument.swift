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
        /// `evalsha`), per script: the starts, and the odd heartbeat claim.
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

    func encoded() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self) + "\n"
    }
}
