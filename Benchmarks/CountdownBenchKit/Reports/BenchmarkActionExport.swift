import Foundation

/// The headline figures as the JSON list CI benchmark dashboards read (github-action-benchmark's
/// `customSmallerIsBetter`: name, unit, value; the samples and the repeats' range as `extra`
/// and `range`). Only resolved figures are listed.
struct BenchmarkActionExport {
    let document: RunDocument

    static let headline: [Figure] = [.tickP50, .tickP99, .tickP999, .finishP99, .cpu, .cpuPerEvent, .startCall, .cancelCall]

    struct Entry: Codable {
        let name: String
        let unit: String
        let value: Double
        let range: String?
        let extra: String
    }

    var entries: [Entry] {
        document.configurations.flatMap { c in
            Self.headline.compactMap { figure -> Entry? in
                guard let v = c[figure], v.isResolved else { return nil }
                var extra = "n=\(v.samples)"
                if v.isLowerBound { extra += ", lower bound (time limit)" }
                if c.isNoisy { extra += ", noisy" }
                return Entry(
                    name: "\(c.id) \(figure.name)", unit: ReportFormat.unitLabel(figure.unit), value: v.value,
                    range: v.repeats.map { "\(ReportFormat.significant($0.min))–\(ReportFormat.significant($0.max))" },
                    extra: extra)
            }
        }
    }

    func render() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(entries), as: UTF8.self) + "\n"
    }
}
