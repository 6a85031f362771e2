import Foundation

/// One countdown as a ``CountdownStore`` keeps it.
package struct CountdownRecord: Sendable, Hashable {
    package enum State: Sendable, Hashable {
        /// The deadline on both clocks, and the boot the boot clock's reading belongs to.
        case running(wallDeadline: Int64, bootDeadline: Int64, bootID: String?)
        /// Frozen with this many nanoseconds left.
        case paused(remaining: Int64)
    }

    package var key: String
    package var state: State
}

/// The store's file: a header line, `swift-countdown-store VERSION BYTES`, then BYTES of JSON.
/// The header tells a file cut short (fewer bytes than declared) from one that is not a store
/// or is damaged, and a newer format from either.
package enum StoreFile {
    static let magic = "swift-countdown-store"
    static let version = 1

    /// The file's body: `{"countdowns": [...]}`; a running record has `wallDeadlineNs`,
    /// `bootDeadlineNs` and `bootID` (absent when the boot's identity could not be read), a
    /// paused one `pausedRemainingNs`.
    private struct Body: Decodable {
        var countdowns: [Entry]
    }

    private struct Entry: Decodable {
        var key: String
        var wallDeadlineNs: Int64?
        var bootDeadlineNs: Int64?
        var bootID: String?
        var pausedRemainingNs: Int64?
    }

    /// The file for `records`. Written by hand, not by `JSONEncoder`: a write carries every
    /// countdown, and the encoder's boxing cost about 5 µs a countdown (a write of 1 000 took
    /// 5 ms), where this takes a fraction of one. `JSONDecoder` reads it back.
    static func encode(_ records: [CountdownRecord]) -> Data {
        var body = JSONText(capacity: 32 + records.count * 112)
        body.append("{\"countdowns\":[")
        for (index, record) in records.enumerated() {
            if index > 0 { body.append(",") }
            switch record.state {
            case let .running(wall, boot, bootID):
                body.append("{\"bootDeadlineNs\":")
                body.append(boot)
                if let bootID {
                    body.append(",\"bootID\":")
                    body.append(string: bootID)
                }
                body.append(",\"key\":")
                body.append(string: record.key)
                body.append(",\"wallDeadlineNs\":")
                body.append(wall)
            case let .paused(remaining):
                body.append("{\"key\":")
                body.append(string: record.key)
                body.append(",\"pausedRemainingNs\":")
                body.append(remaining)
            }
            body.append("}")
        }
        body.append("]}")
        var file = Data("\(magic) \(version) \(body.bytes.count)\n".utf8)
        file.append(contentsOf: body.bytes)
        return file
    }

    package static func decode(_ file: Data, path: String) throws(CountdownStoreError) -> [CountdownRecord] {
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

/// JSON text built byte by byte: integers and strings (escaped as RFC 8259 asks: the quote, the
/// backslash and the control characters; everything else as its UTF-8 bytes).
struct JSONText {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    mutating func append(_ literal: StaticString) {
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func append(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        // 20 digits at most (UInt64.max), written backwards into 24 bytes on the stack.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var first = buffer.count
            repeat {
                first -= 1
                buffer[first] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: buffer[first...])
        }
    }

    mutating func append(string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        // Contiguous UTF-8 (native strings are), copied whole between the bytes to escape: a
        // key like "sms-code:+15550100" is one copy.
        string.withUTF8 { utf8 in
            var clean = 0
            for (index, byte) in utf8.enumerated() where byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean..<index]))
                appendEscaped(byte)
                clean = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[clean...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func appendEscaped(_ byte: UInt8) {
        if byte >= 0x20 {
            bytes.append(contentsOf: [UInt8(ascii: "\\"), byte])
            return
        }
        let hex: StaticString = "0123456789abcdef"
        bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
        bytes.append(hex.utf8Start[Int(byte >> 4)])
        bytes.append(hex.utf8Start[Int(byte & 0xF)])
    }
}
