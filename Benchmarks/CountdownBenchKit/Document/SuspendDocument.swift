/// suspend.json: every backend's frozen, notified, killed and clock-jumped workers, with the
/// machine they ran on. Written by `countdown-bench suspend --output`, read by `guide`.
struct SuspendDocument: Codable, Sendable {
    static let currentFormat = "countdown-bench.suspend"
    static let currentVersion = 1

    var format = currentFormat
    var version = currentVersion
    let machine: Machine
    let tickMs: Double
    let durationMs: Double
    let results: [SuspendExperiment.Result]
}

extension SuspendDocument {
    func encoded() throws -> String { try PrettyJSON.encode(self) }
}
