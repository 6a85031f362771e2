import CountdownConformance

/// conformance.json: the suite's report on each backend, with the machine it ran on. Written by
/// `countdown-bench conformance --output`, read by `guide`.
struct ConformanceDocument: Codable, Sendable {
    let machine: Machine
    let seed: UInt64
    let randomizedOperations: Int
    let reports: [ConformanceReport]

    /// A backend's result of one check, nil when that check did not run on it.
    func result(_ checkID: String, of backend: String) -> CheckResult? {
        reports.first { $0.backend == backend }?.results.first { $0.id == checkID }
    }
}

extension ConformanceDocument {
    func encoded() throws -> String { try PrettyJSON.encode(self) }
}
