/// What a fleet trial showed, judged key by key: the figures a check reports and the benchmark
/// writes, and the first failures in words.
public struct FleetTrialReport: Sendable, Codable, Equatable {
    /// Member processes in the trial.
    public var members = 0
    /// Keys the calls raced on.
    public var keys = 0
    /// Calls made.
    public var calls = 0
    /// Calls that threw (their outcome unknown: judged as either).
    public var failedCalls = 0
    /// Calls of living members that never returned.
    public var hungCalls = 0
    /// Keys whose calls did not race (spread over more than half a countdown by a loaded
    /// machine): neither judged nor failed.
    public var inconclusiveKeys = 0
    /// Keys no order of the calls explains.
    public var failedKeys = 0
    /// Finishes owed to observers in living members, heard, lost, early, and countdowns finished more than once.
    public var finishesOwed = 0
    /// Owed finishes that were heard.
    public var finishesHeard = 0
    /// Owed finishes never heard.
    public var finishesLost = 0
    /// Finishes heard before their deadline.
    public var finishesEarly = 0
    /// Countdowns whose finish was heard more than once.
    public var finishedTwice = 0
    /// Ticks that began more than the bound after the call that replaced, cancelled or paused
    /// their observer returned.
    public var staleTicks = 0
    /// The latest any such tick began after that call returned, in milliseconds.
    public var latestTickAfterEndMs = 0.0
    /// Observers the living members still held when everything had ended.
    public var observersHeld = 0
    /// Members killed with SIGKILL, and answers the proxy dropped or reset.
    public var killed = 0
    /// Answers the proxy dropped or reset.
    public var faultsInjected = 0
    /// The first failures, in words.
    public var failures: [String] = []

    /// An empty report, for the judge to fill in.
    public init() {}

    /// This trial and `other` (two rounds) as one: counts summed, the latest tick the later of the two, the
    /// first failures of both.
    public func adding(_ other: FleetTrialReport) -> FleetTrialReport {
        var sum = self
        sum.members = max(members, other.members)
        for path in [\FleetTrialReport.keys, \.calls, \.failedCalls, \.hungCalls, \.inconclusiveKeys, \.failedKeys,
                     \.finishesOwed, \.finishesHeard, \.finishesLost, \.finishesEarly, \.finishedTwice, \.staleTicks,
                     \.observersHeld, \.killed, \.faultsInjected] {
            sum[keyPath: path] += other[keyPath: path]
        }
        sum.latestTickAfterEndMs = max(latestTickAfterEndMs, other.latestTickAfterEndMs)
        sum.failures = Array((failures + other.failures).prefix(FleetJudge.failuresKept))
        return sum
    }

    /// Whether nothing failed.
    public var passed: Bool { failedKeys == 0 && hungCalls == 0 && observersHeld == 0 && failures.isEmpty }

    /// One line: the trial's size and what it found.
    public var summary: String {
        var parts = ["\(members) members, \(keys) keys, \(calls) calls (\(failedCalls) threw)"]
        if killed > 0 { parts.append("\(killed) killed") }
        if faultsInjected > 0 { parts.append("\(faultsInjected) answers dropped or reset") }
        parts.append("\(finishesHeard) of \(finishesOwed) owed finishes heard, \(finishesLost) lost, \(finishesEarly) early, \(finishedTwice) doubled")
        parts.append("\(staleTicks) late ticks (latest \(String(format: "%.1f", latestTickAfterEndMs)) ms after the call that ended them)")
        parts.append("\(observersHeld) observers held at the end")
        if inconclusiveKeys > 0 { parts.append("\(inconclusiveKeys) keys did not race") }
        return parts.joined(separator: "; ")
    }
}
