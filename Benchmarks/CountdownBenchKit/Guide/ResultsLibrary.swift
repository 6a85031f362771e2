import Foundation

/// The committed results: every machine folder under `results/`, its files read into their
/// typed documents. A file that is there but cannot be read is an error, never skipped.
struct ResultsLibrary: Sendable {
    let machines: [MachineResults]

    /// Reads every folder of `root` that holds a result file. Throws when `root` cannot be
    /// listed, holds no machine folder, or a result file in it cannot be read.
    static func load(_ root: String) throws(GuideError) -> ResultsLibrary {
        let files = FileManager.default
        let names: [String]
        do {
            names = try files.contentsOfDirectory(atPath: root).sorted()
        } catch {
            throw GuideError("cannot read the results folder \(root): \(error.localizedDescription)")
        }
        var machines: [MachineResults] = []
        for name in names where isDirectory("\(root)/\(name)") {
            let machine = try MachineResults.load(folder: name, in: root)
            if !machine.isEmpty { machines.append(machine) }
        }
        guard !machines.isEmpty else {
            throw GuideError("\(root) holds no machine folder (a folder with run.json, conformance.json or suspend.json)")
        }
        return ResultsLibrary(machines: machines)
    }

    static func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }
}

/// One machine's folder: its runs (the default run.json and one per subfolder), its
/// conformance matrix and its suspension table.
struct MachineResults: Sendable {
    /// The folder's name, which names the machine: `amd-epyc-2-cores`.
    let folder: String
    /// Each run by its path inside the folder: `run.json`, `tick-1s/run.json`.
    let runs: [String: RunDocument]
    let conformance: ConformanceDocument?
    let suspend: SuspendDocument?
    /// The Redis strategies' measurements and verdicts, in `redis/` (a build with the trait).
    var fleet: FleetDocument? = nil
    var fleetConformance: ConformanceDocument? = nil

    static let conformanceFile = "conformance.json"
    static let suspendFile = "suspend.json"
    static let fleetFolder = "redis"

    var isEmpty: Bool { runs.isEmpty && conformance == nil && suspend == nil }

    /// The machine as its files recorded it.
    var machine: Machine? {
        runs["run.json"]?.machine ?? runs.min { $0.key < $1.key }?.value.machine ?? conformance?.machine ?? suspend?.machine
    }

    static func load(folder: String, in root: String) throws(GuideError) -> MachineResults {
        let base = "\(root)/\(folder)"
        var runs: [String: RunDocument] = [:]
        var candidates = ["run.json"]
        let subfolders = ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []).sorted()
        candidates += subfolders.filter { ResultsLibrary.isDirectory("\(base)/\($0)") }.map { "\($0)/run.json" }
        for file in candidates where FileManager.default.fileExists(atPath: "\(base)/\(file)") {
            do {
                runs[file] = try RunDocumentFile.load("\(base)/\(file)")
            } catch {
                throw GuideError(error.description)
            }
        }
        var results = MachineResults(
            folder: folder, runs: runs,
            conformance: try decode(ConformanceDocument.self, "\(base)/\(conformanceFile)"),
            suspend: try decode(SuspendDocument.self, "\(base)/\(suspendFile)"))
        results.fleet = try decode(FleetDocument.self, "\(base)/\(fleetFolder)/\(FleetDocument.fileName)")
        results.fleetConformance = try decode(ConformanceDocument.self, "\(base)/\(fleetFolder)/\(conformanceFile)")
        return results
    }

    /// The file decoded, nil when it is not there.
    private static func decode<Document: Decodable>(_ type: Document.Type, _ path: String) throws(GuideError) -> Document? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return try JSONDecoder().decode(type, from: Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw GuideError("\(path) cannot be read: \(error)")
        }
    }
}

/// Results or a README the guide cannot use: one line, exit status 1.
struct GuideError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
