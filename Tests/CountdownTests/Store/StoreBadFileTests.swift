import CountdownSupport
import Dispatch
import Foundation
import Testing

@testable import Countdown
@testable import CountdownBenchKit
@testable import CountdownConformance

/// `CountdownStore`: what a relaunched process gets back, and what a bad file does (a typed

/// Bad store files: a typed error, nothing restored, the file untouched; one store per scheduler.
extension StoreTests {
    // MARK: - Bad files: a typed error, nothing restored, the file untouched

    static let validFile = StoreFile.encode([
        CountdownRecord(key: "a", state: .running(wallDeadline: 1, bootDeadline: 2, bootID: "x")),
        CountdownRecord(key: "b", state: .paused(remaining: 5_000_000_000)),
    ])

    enum Expected: Sendable, CustomTestStringConvertible {
        case corrupt, truncated, newer
        var testDescription: String { "\(self)" }
        func matches(_ error: CountdownStoreError) -> Bool {
            switch (self, error) {
            case (.corrupt, .corrupt), (.truncated, .truncated): true
            case (.newer, .newerVersion(_, 2, 1)): true
            default: false
            }
        }
    }

    /// A file with a correct header around `body`.
    static func file(_ body: String, version: Int = 1) -> Data {
        Data("swift-countdown-store \(version) \(body.utf8.count)\n\(body)".utf8)
    }

    static let badFiles: [(String, Data, Expected)] = [
        ("random bytes", Data((0..<200).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }), .corrupt),
        ("another format's file", Data("{\"countdowns\": []}\n".utf8), .corrupt),
        ("a header with damaged JSON", file("{\"countdown"), .corrupt),
        ("a key twice", file(#"{"countdowns":[{"key":"a","pausedRemainingNs":5},{"key":"a","pausedRemainingNs":7}]}"#), .corrupt),
        ("a record neither running nor paused", file(#"{"countdowns":[{"key":"a"}]}"#), .corrupt),
        ("an empty key", file(#"{"countdowns":[{"key":"","pausedRemainingNs":5}]}"#), .corrupt),
        ("a version that is not a number", file("{}", version: 0), .corrupt),
        ("bytes after the declared end", validFile + Data("garbage".utf8), .corrupt),
        ("cut in the middle", validFile.prefix(validFile.count / 2), .truncated),
        ("cut in the header", validFile.prefix(10), .truncated),
        ("empty", Data(), .truncated),
        ("a newer version", file("{}", version: 2), .newer),
    ]

    @Test("a bad store file throws a typed error and is left untouched", arguments: 0..<badFiles.count)
    func badFile(_ index: Int) throws {
        let (name, bytes, expected) = Self.badFiles[index]
        let folder = Folder()
        folder.write(bytes)
        let scheduler = try scheduler()
        defer { scheduler.shutdown() }
        for attempt in 1...2 {
            do {
                try scheduler.restore(from: CountdownStore(path: folder.store))
                Issue.record("\(name): restored from a bad file")
            } catch {
                #expect(expected.matches(error), "\(name), attempt \(attempt): \(error)")
                #expect(!error.description.isEmpty)
            }
        }
        #expect(scheduler.activeCount == 0, "\(name): something was restored")
        // The scheduler has no store: its changes must not reach the file.
        try scheduler.start(key: "after", duration: .seconds(5)) { _ in }
        scheduler.cancel(key: "after")
        #expect(folder.bytes() == bytes, "\(name): the file was changed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["countdowns.store"], "\(name): files appeared beside it")
    }

    @Test("a file that cannot be read, or a directory in its place, is a typed error")
    func unreadable() throws {
        let folder = Folder()
        try FileManager.default.createDirectory(atPath: folder.store, withIntermediateDirectories: false)
        let scheduler = try scheduler()
        defer { scheduler.shutdown() }
        let error = #expect(throws: CountdownStoreError.self) {
            try scheduler.restore(from: CountdownStore(path: folder.store))
        }
        guard case .unreadable? = error else {
            Issue.record("not .unreadable: \(String(describing: error))")
            return
        }
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: folder.store, isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    @Test("countdowns a scheduler refuses: nothing restored, the file untouched")
    func refusedRecords() throws {
        let folder = Folder()
        let records = (0..<3).map { CountdownRecord(key: "k\($0)", state: .paused(remaining: 1_000_000_000)) }
        let file = StoreFile.encode(records)
        folder.write(file)
        let small = try OperationQueueScheduler(tickInterval: .milliseconds(100), capacity: 2)
        defer { small.shutdown() }
        let full = #expect(throws: CountdownStoreError.self) { try small.restore(from: CountdownStore(path: folder.store)) }
        if case .refused(_, .capacityExceeded(2))? = full {} else { Issue.record("beyond the capacity: \(String(describing: full))") }
        #expect(small.activeCount == 0)
        let short = try TimestampScheduler(tickInterval: .milliseconds(100), maximumDuration: .milliseconds(500))
        defer { short.shutdown() }
        let long = #expect(throws: CountdownStoreError.self) { try short.restore(from: CountdownStore(path: folder.store)) }
        if case .refused("k0", .durationAboveMaximum)? = long {} else { Issue.record("above the maximum: \(String(describing: long))") }
        #expect(short.activeCount == 0)
        #expect(folder.bytes() == file)
    }

    @Test("one store per scheduler, one scheduler per store")
    func attachedOnce() throws {
        let folder = Folder()
        let store = CountdownStore(path: folder.store)
        let first = try scheduler(), second = try scheduler()
        defer { first.shutdown(); second.shutdown() }
        try first.restore(from: store)
        let again = #expect(throws: CountdownStoreError.self) { try first.restore(from: CountdownStore(path: folder.store + ".other")) }
        let shared = #expect(throws: CountdownStoreError.self) { try second.restore(from: store) }
        for error in [again, shared] {
            if case .alreadyAttached? = error {} else { Issue.record("not .alreadyAttached: \(String(describing: error))") }
        }
    }
}
