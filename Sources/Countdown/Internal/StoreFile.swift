import Foundation

/// One countdown as a ``CountdownStore`` keeps it.
struct CountdownRecord: Sendable, Hashable {
    enum State: Sendable, Hashable {
        /// The deadline on both clocks, and the boot the boot clock's reading belongs to.
        case running(wallDeadline: Int64, bootDeadline: Int64, bootID: String?)
        /// Frozen with this many nanoseconds left.
        case paused(remaining: Int64)
    }

    var key: String
    var state: State
}

/// The store's file: a header line, `swift-countdown-store VERSION BYTES`, then BYTES of JSON.
/// The header tells a file cut short (fewer bytes than declared) from one that is not a store
/// or is damaged, and a newer format from either.
enum StoreFile {
    static let magic = "swift-countdown-store"
    static let version = 1

    /// The file's body: `{"countdowns": [...]}`; a running record has `wallDeadlineNs`,
    /// `bootDeadlineNs` and `bootID` (absent when the boot's identity could not be read), a
    /// paused one `pausedRemainingNs`.
    private struct Body: Codable {
        var countdowns: [Entry]
    }

    private struct Entry: Codable {
        var key: String
        var wallDeadlineNs: Int64?
        var bootDeadlineNs: Int64?
        var bootID: String?
        var pausedRemainingNs: Int64?
    }

    static func encode(_ records: [CountdownRecord]) -> Data {
        let entries = records.map { record in
            switch record.state {
            case let .running(wall, boot, bootID):
                Entry(key: record.key, wallDeadlineNs: wall, bootDeadlineNs: boot, bootID: bootID)
            case let .paused(remaining):
                Entry(key: record.key, pausedRemainingNs: remaining)
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain strings and integers cannot fail.
        let body = try! encoder.encode(Body(countdowns: entries))
        var file = Data("\(magic) \(version) \(body.count)\n".utf8)
        file.append(body)
        return file
    }

    static func decode(_ file: Data, path: String) throws(CountdownStoreError) -> [CountdownRecord] {
        guard let newline = file.firstIndex(of: UInt8(ascii: "\n")) else {
            // A header cut short, or no header at all.
            if Data(magic.utf8).starts(with: file.prefix(magic.utf8.count)) {
                throw .truncated(path: path, expectedBytes: nil, foundBytes: file.count)
            }
            throw .corrupt(path: path, reason: "no \(magic) header")
        }
        let words = String(decoding: file[..<newline], as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
        guard words.count == 3, words[0] == magic else { throw .corrupt(path: path, reason: "no \(magic) header") }
        guard let found = Int(words[1]), found >= 1 else { throw .corrupt(path: path, reason: "format version '\(words[1])'") }
        guard found <= version else { throw .newerVersion(path: path, found: found, supported: version) }
        guard let length = Int(words[2]), length >= 0 else { throw .corrupt(path: path, reason: "body length '\(words[2])'") }
        let body = file[(newline + 1)...]
        let headerBytes = newline + 1 - file.startIndex
        guard body.count >= length else {
            throw .truncated(path: path, expectedBytes: headerBytes + length, foundBytes: file.count)
        }
        guard body.count == length else {
            throw .corrupt(path: path, reason: "\(body.count - length) bytes after the declared end")
        }
        let decoded: Body
        do {
            decoded = try JSONDecoder().decode(Body.self, from: Data(body))
        } catch {
            throw .corrupt(path: path, reason: "its countdowns cannot be decoded (\(error))")
        }
        var keys = Set<String>()
        return try decoded.countdowns.map { entry throws(CountdownStoreError) in
            guard !entry.key.isEmpty else { throw .corrupt(path: path, reason: "a countdown with an empty key") }
            guard keys.insert(entry.key).inserted else { throw .corrupt(path: path, reason: "the key \"\(entry.key)\" twice") }
            switch (entry.wallDeadlineNs, entry.bootDeadlineNs, entry.pausedRemainingNs) {
            case let (wall?, boot?, nil):
                return CountdownRecord(key: entry.key, state: .running(wallDeadline: wall, bootDeadline: boot, bootID: entry.bootID))
            case let (nil, nil, remaining?) where remaining > 0:
                return CountdownRecord(key: entry.key, state: .paused(remaining: remaining))
            default:
                throw .corrupt(path: path, reason: "the countdown \"\(entry.key)\" is neither running nor paused")
            }
        }
    }
}
