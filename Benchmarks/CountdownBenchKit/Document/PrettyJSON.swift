import Foundation

/// conformance.json and suspend.json are written for people to read and diff: indented, keys
/// sorted. One encoder for both, so that what `guide` reads back is what was written.
enum PrettyJSON {
    static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self) + "\n"
    }
}
