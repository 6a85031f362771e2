import CountdownSupport
import Dispatch
import Foundation
import Testing

@testable import Countdown
@testable import CountdownBenchKit
@testable import CountdownConformance

/// `CountdownStore`: what a relaunched process gets back, and what a bad file does (a typed

/// Writers at the same time: the file always whole; a dead writer's temporary file removed.
extension StoreTests {
    // MARK: - Writers at the same time

    @Test("concurrent writers: the file is always whole, and ends as the scheduler ends")
    func concurrentWriters() throws {
        let folder = Folder()
        let scheduler = try scheduler()
        defer { scheduler.shutdown() }
        try scheduler.restore(from: CountdownStore(path: folder.store))
        // A second process's scheduler writing the same file (a store of its own).
        let other = try self.scheduler()
        defer { other.shutdown() }
        try other.restore(from: CountdownStore(path: folder.store))
        let reading = Locked(true)
        let failures = Locked<[String]>([])
        let reads = Locked(0)
        let reader = Thread {
            while reading.withLock({ $0 }) {
                do {
                    _ = try CountdownStore(path: folder.store).read()
                    reads.withLock { $0 += 1 }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        reader.start()
        onThreads(6) { thread in
            var random = SplitMix(seed: UInt64(thread) + 1)
            let target = thread == 5 ? other : scheduler
            for _ in 0..<150 {
                let key = "k\(random.below(12))"
                switch random.below(4) {
                case 0: _ = try? target.start(key: key, duration: .milliseconds(Int64(20 + random.below(200)))) { _ in }
                case 1: target.cancel(key: key)
                case 2: target.pause(key: key)
                default: target.resume(key: key)
                }
            }
        }
        reading.withLock { $0 = false }
        while !reader.isFinished { settle(.milliseconds(5)) }
        #expect(failures.withLock { $0 } == [], "a reader found the file broken")
        #expect(reads.withLock { $0 } > 0, "the reader never read")
        // The other writer stops; one last change by the first: the file then holds exactly
        // the first's countdowns (its own finishes write it again, always whole).
        other.shutdown()
        try scheduler.start(key: "last", duration: .seconds(30)) { _ in }
        #expect(waitUntil { (try? Set(stored(folder).keys)) == Set(scheduler.activeKeys) },
                "the file does not hold the scheduler's countdowns")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["countdowns.store"], "temporary files left behind")
    }

    @Test("a store written while countdowns start and finish ends empty")
    func writtenWhileStartingAndFinishing() throws {
        let folder = Folder()
        let scheduler = try scheduler(tick: .milliseconds(20))
        defer { scheduler.shutdown() }
        try scheduler.restore(from: CountdownStore(path: folder.store))
        let finishes = Locked(0)
        onThreads(4) { thread in
            for index in 0..<25 {
                _ = try? scheduler.start(key: "t\(thread)-\(index)", duration: .milliseconds(Int64(10 + (index * 7) % 90))) { event in
                    if event.kind == .finished { finishes.withLock { $0 += 1 } }
                }
            }
        }
        #expect(waitUntil { finishes.withLock { $0 } == 100 }, "\(finishes.withLock { $0 }) of 100 finished")
        #expect(try stored(folder).isEmpty, "finished countdowns left in the store")
    }

    @Test("a temporary file of a writer that died is removed; a live writer's is kept")
    func deadWritersFiles() throws {
        let folder = Folder()
        let dead = folder.path + "/.countdowns.store.999999999-1.tmp"
        let live = folder.path + "/.countdowns.store.1-2.tmp"  // pid 1 is alive
        for path in [dead, live] { _ = FileManager.default.createFile(atPath: path, contents: Data("half".utf8)) }
        let scheduler = try scheduler()
        defer { scheduler.shutdown() }
        try scheduler.restore(from: CountdownStore(path: folder.store))
        #expect(!FileManager.default.fileExists(atPath: dead))
        #expect(FileManager.default.fileExists(atPath: live))
    }
}
