import Foundation

/// run.json on disk: the current document written compact (sorted keys, no indentation), and
/// any version this countdown-bench knows read back.
enum RunDocumentFile {
    static func encode(_ document: RunDocument) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(document), as: UTF8.self) + "\n"
    }

    /// Reads `path`, or `path/run.json` when `path` is a folder `run --output` wrote.
    static func load(_ path: String) throws(RunFileError) -> RunDocument {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw RunFileError("cannot read \(path): there is no such file or folder")
        }
        let path = isFolder.boolValue ? (path.hasSuffix("/") ? path : path + "/") + "run.json" : path
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "it cannot be opened" : "the folder holds no run.json"
            throw RunFileError("cannot read \(path): \(reason)")
        }
        struct Header: Decodable { let format: String; let version: Int }
        guard let header = try? JSONDecoder().decode(Header.self, from: data), header.format == RunDocument.currentFormat else {
            throw RunFileError("\(path) is not a run.json written by countdown-bench run --output")
        }
        do {
            switch header.version {
            case 1: return try JSONDecoder().decode(RunDocumentV1.self, from: data).upgraded
            case RunDocument.currentVersion: return try JSONDecoder().decode(RunDocument.self, from: data)
            default:
                throw RunFileError("\(path) has format version \(header.version); this countdown-bench reads versions 1 to \(RunDocument.currentVersion)")
            }
        } catch let error as RunFileError {
            throw error
        } catch {
            throw RunFileError("\(path) is damaged: \(error)")
        }
    }
}

/// A run.json that cannot be used: reported in one line, exit status 1.
struct RunFileError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
