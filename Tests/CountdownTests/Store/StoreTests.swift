import CountdownSupport
import Dispatch
import Foundation
import Testing

@testable import Countdown
@testable import CountdownBenchKit
@testable import CountdownConformance

/// `CountdownStore`: what a relaunched process gets back, and what a bad file does (a typed
/// error, the file untouched, nothing restored or written). Timing bounds are one-sided.
@Suite("Store", .dedicatedThread, .timeLimit(.minutes(2)))
struct StoreTests {
    /// A fresh directory per test, removed at the end.
    final class Folder: Sendable {
        let path = NSTemporaryDirectory() + "countdown-store-\(UUID().uuidString)"
        init() { try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        var store: String { path + "/countdowns.store" }
        func bytes() -> Data? { FileManager.default.contents(atPath: store) }
        func write(_ data: Data) { _ = FileManager.default.createFile(atPath: store, contents: data) }
    }

    func scheduler(_ backend: CountdownBackend = .timestamp(.continuous), tick: Duration = .milliseconds(100)) throws -> KeyedCountdownScheduler {
        try #require(try backend.makeScheduler(.init(tickInterval: tick)) as? KeyedCountdownScheduler)
    }

    /// What the file holds now, read as a relaunched process would.
    func stored(_ folder: Folder) throws -> [String: CountdownRecord.State] {
        let records = try CountdownStore(path: folder.store).read()
        return Dictionary(uniqueKeysWithValues: records.map { ($0.key, $0.state) })
    }

    @Test("a missing store restores nothing; every change is written")
    func missingStoreStartsEmpty() throws {
        let folder = Folder()
        let scheduler = try scheduler()
        defer { scheduler.shutdown() }
        #expect(try scheduler.restore(from: CountdownStore(path: folder.store)) == CountdownRestoration())
        #expect(try stored(folder).isEmpty)
        try scheduler.start(key: "sms", duration: .seconds(30)) { _ in }
        try scheduler.start(key: "mail", duration: .seconds(30)) { _ in }
        scheduler.waitUntilStored()
        #expect(try Set(stored(folder).keys) == ["sms", "mail"], "waitUntilStored returned before the store held the countdowns")
        scheduler.pause(key: "mail")
        scheduler.waitUntilStored()
        guard case .paused(let frozen)? = try stored(folder)["mail"] else {
            Issue.record("a paused countdown is not stored paused: \(try stored(folder))")
            return
        }
        #expect(frozen > 29_000_000_000 && frozen <= 30_000_000_000)
        scheduler.cancel(key: "sms")
        // The app going to the background waits for the store as well.
        scheduler.enteredBackground()
        #expect(try Set(stored(folder).keys) == ["mail"], "enteredBackground returned before the store held the cancel")
        scheduler.enteredForeground()
        try scheduler.start(key: "late", duration: .seconds(30)) { _ in }
        scheduler.cancel(key: "late")
        scheduler.shutdown()
        #expect(try Set(stored(folder).keys) == ["mail"], "shutdown must leave the store for the next launch")
    }

    @Test("restore after the process is gone: running on its deadline, paused still paused", arguments: allBackends)
    func restoreAfterTheProcessIsGone(_ backend: CountdownBackend) throws {
        let folder = Folder()
        var startedAt: UInt64 = 0
        do {
            // The first process: released without a word (its release waits for the store, as
            // the app's background would have before the system killed it).
            let first = try scheduler(backend)
            try first.restore(from: CountdownStore(path: folder.store))
            startedAt = SystemClocks.monotonic()
            try first.start(key: "running", duration: .milliseconds(1500)) { _ in }
            try first.start(key: "paused", duration: .seconds(60)) { _ in }
            #expect(first.pause(key: "paused"))
        }
        let second = try scheduler(backend)
        defer { second.shutdown() }
        let elapsed = Duration.nanoseconds(Int64(SystemClocks.monotonic() - startedAt))
        let restoration = try second.restore(from: CountdownStore(path: folder.store))
        #expect(restoration.expired.isEmpty && restoration.kept.isEmpty)
        let running = try #require(restoration.running["running"], "\(restoration)")
        // Read before the restore, from before the start: at most the time left then. A tick
        // counter believes what its fires counted, and a fire late on a loaded machine makes it
        // believe in more: 100 ms of that is allowed.
        #expect(running <= .milliseconds(1500) - elapsed + .milliseconds(100), "restored with more time than was left: \(running)")
        #expect(running > .zero)
        let paused = try #require(restoration.paused["paused"], "\(restoration)")
        #expect(paused <= .seconds(60) && paused > .seconds(59))
        #expect(second.remaining(key: "paused") == paused, "a restored paused countdown must stay frozen")

        // Restored countdowns run with no observer until a screen attaches by key.
        let screen = recorder()
        let told = try #require(second.attach(key: "running", observer: screen.observer))
        #expect(told <= running)
        #expect(screen.waitForFinish(), "the restored countdown never finished")
        let finish = try #require(screen.finishes.first)
        #expect(finish.at + ClockAllowance.process >= startedAt + 1_500_000_000, "finished before the original deadline")
        expectWellFormed(screen.all, "\(backend)")
        #expect(try Set(stored(folder).keys) == ["paused"], "the finish was not written")

        settle(.milliseconds(150))
        #expect(second.remaining(key: "paused") == paused, "the paused countdown moved")
        #expect(second.resume(key: "paused"))
        #expect(second.remaining(key: "paused").map { $0 < paused } ?? false)
    }

    @Test("a finish is heard only once the store no longer holds it")
    func finishIsWrittenBeforeItIsDelivered() throws {
        let folder = Folder()
        let scheduler = try scheduler()
        defer { scheduler.shutdown() }
        try scheduler.restore(from: CountdownStore(path: folder.store))
        let heldAtFinish = Locked<[String: Bool]>([:])
        let finished = DispatchSemaphore(value: 0)
        for index in 0..<20 {
            let key = "k\(index)"
            try scheduler.start(key: key, duration: .milliseconds(Int64(50 + 10 * index))) { event in
                guard event.kind == .finished else { return }
                let held = (try? CountdownStore(path: folder.store).read())?.contains { $0.key == key }
                heldAtFinish.withLock { $0[key] = held ?? true }
                finished.signal()
            }
        }
        for _ in 0..<20 { #expect(finished.wait(timeout: .now() + 10) == .success) }
        #expect(heldAtFinish.withLock { $0.count } == 20)
        #expect(heldAtFinish.withLock { $0.filter(\.value).keys.sorted() } == [], "finished countdowns still in the store when heard")
        #expect(try stored(folder).isEmpty)
    }

    @Test("within one boot the boot clock decides; after a reboot the wall clock")
    func whichClockDecides() throws {
        let folder = Folder()
        let startedAtWall: Int64 = 1_700_000_000_000_000_000
        let wall = Locked<Int64>(startedAtWall), boot = Locked<Int64>(5_000_000_000)
        func clocks(bootID: String) -> StoreClocks {
            StoreClocks(wall: { wall.withLock { $0 } }, boot: { boot.withLock { $0 } }, bootID: bootID)
        }
        do {
            let first = try scheduler()
            try first.restore(from: CountdownStore(path: folder.store, clocks: clocks(bootID: "boot-A")))
            try first.start(key: "k", duration: .seconds(100)) { _ in }
        }
        // Ten seconds later by the boot clock; meanwhile someone set the wall clock an hour on.
        boot.withLock { $0 += 10_000_000_000 }
        wall.withLock { $0 += 3_610_000_000_000 }
        let sameBoot = try scheduler()
        let kept = try sameBoot.restore(from: CountdownStore(path: folder.store, clocks: clocks(bootID: "boot-A")))
        let left = try #require(kept.running["k"], "\(kept)")
        #expect(left <= .seconds(90) && left > .seconds(89), "same boot: the boot clock decides, the wall clock's hour does not")
        sameBoot.shutdown()

        // That restore wrote the deadline again, on the wall clock as it now reads. A reboot
        // 30 s later: the boot clock starts again, and the wall clock (still an hour on) decides.
        boot.withLock { $0 = 1_000_000_000 }
        wall.withLock { $0 = startedAtWall + 3_640_000_000_000 }
        let rebooted = try scheduler()
        defer { rebooted.shutdown() }
        let restored = try rebooted.restore(from: CountdownStore(path: folder.store, clocks: clocks(bootID: "boot-B")))
        let afterReboot = try #require(restored.running["k"], "\(restored)")
        #expect(afterReboot <= .seconds(60) && afterReboot > .seconds(59), "after a reboot the wall clock decides: \(afterReboot)")
    }

    @Test("a countdown whose deadline passed while the process was gone is reported expired, and leaves the file")
    func expiredCountdowns() throws {
        let folder = Folder()
        do {
            let first = try scheduler()
            try first.restore(from: CountdownStore(path: folder.store))
            // A second: a loaded machine took more than the 30 ms this once had to reach the
            // shutdown before the short one finished.
            try first.start(key: "short", duration: .seconds(1)) { _ in }
            try first.start(key: "long", duration: .seconds(30)) { _ in }
            first.shutdown()  // before the short one finishes: the store keeps both
        }
        settle(.milliseconds(1100))
        let second = try scheduler()
        defer { second.shutdown() }
        let restoration = try second.restore(from: CountdownStore(path: folder.store))
        #expect(restoration.expired == ["short"])
        #expect(restoration.running.keys.sorted() == ["long"])
        #expect(second.remaining(key: "short") == nil)
        #expect(try Set(stored(folder).keys) == ["long"], "an expired countdown must leave the store")
    }

    // MARK: - Writes in the background

    /// A store whose writes stop half-way until the test lets them go on (a slow disk, made
    /// to order), and which counts the writes that finished.
    final class SlowDisk: Sendable {
        private let isBlocking = Locked(false)
        private let resume = DispatchSemaphore(value: 0)
        let blockedWrites = Locked(0)
        let writes = Locked(0)

        func store(_ folder: Folder) -> CountdownStore {
            CountdownStore(path: folder.store, clocks: .system, hooks: StoreHooks(midWrite: { [self] in
                guard isBlocking.withLock({ $0 }) else { return }
                blockedWrites.withLock { $0 += 1 }
                resume.wait()
            }, wrote: { [self] _ in writes.withLock { $0 += 1 } }))
        }

        /// From now on a write waits half-way until ``release()``.
        func block() { isBlocking.withLock { $0 = true } }

        func release() {
            isBlocking.withLock { $0 = false }
            for _ in 0..<blockedWrites.withLock({ $0 }) { resume.signal() }
        }
    }

    /// Runs `body` on a thread of its own; the returned flag says whether it has returned.
    func inBackground(_ body: @escaping @Sendable () -> Void) -> Locked<Bool> {
        let returned = Locked(false)
        Thread {
            body()
            returned.withLock { $0 = true }
        }.start()
        return returned
    }

    @Test("start, cancel, pause and resume never wait for the disk; the background and a shutdown do")
    func callersNeverWaitForTheDisk() throws {
        let folder = Folder(), disk = SlowDisk()
        let scheduler = try scheduler()
        try scheduler.restore(from: disk.store(folder))
        disk.block()
        // Each of these returns while the disk is stuck (a write waiting on the test); run on a
        // thread of their own, so that one waiting for its write fails here instead of hanging.
        let calls = Locked(false)
        let changes = inBackground {
            let started = (try? scheduler.start(key: "sms", duration: .seconds(30)) { _ in }) != nil
                && (try? scheduler.start(key: "mail", duration: .seconds(30)) { _ in }) != nil
            let changed = scheduler.pause(key: "mail") && scheduler.resume(key: "mail") && scheduler.cancel(key: "mail")
            calls.withLock { $0 = started && changed }
        }
        #expect(waitUntil { changes.withLock { $0 } }, "a start, pause, resume or cancel waited for the stuck disk")
        #expect(calls.withLock { $0 }, "a start, pause, resume or cancel was refused")
        #expect(waitUntil { disk.blockedWrites.withLock { $0 } == 1 }, "no write began")
        #expect(try stored(folder).isEmpty, "the stuck write already reached the file")

        // The background waits: from there on the system may kill the app without a word.
        let background = inBackground { scheduler.enteredBackground() }
        settle(.milliseconds(200))
        #expect(!background.withLock { $0 }, "enteredBackground returned while the store was stuck")
        disk.release()
        #expect(waitUntil { background.withLock { $0 } }, "enteredBackground never returned")
        #expect(try Set(stored(folder).keys) == ["sms"], "the background returned before the file held every change")

        // A shutdown waits as well: what ran before it is there at the next launch.
        disk.block()
        let lastStarted = inBackground { _ = try? scheduler.start(key: "last", duration: .seconds(30)) { _ in } }
        #expect(waitUntil { lastStarted.withLock { $0 } }, "a start waited for the stuck disk")
        let shutdown = inBackground { scheduler.shutdown() }
        #expect(waitUntil { disk.blockedWrites.withLock { $0 } == 2 })
        settle(.milliseconds(200))
        #expect(!shutdown.withLock { $0 }, "shutdown returned while the store was stuck")
        disk.release()
        #expect(waitUntil { shutdown.withLock { $0 } }, "shutdown never returned")
        #expect(try Set(stored(folder).keys) == ["sms", "last"])
    }

    @Test("a finish waits for its write without blocking the delivery queue, and comes in order")
    func aFinishWaitsForItsWriteNotTheQueue() throws {
        let folder = Folder(), disk = SlowDisk()
        let delivery = DispatchQueue(label: "store-test.delivery")
        let scheduler = try #require(try CountdownBackend.timestamp(.continuous).makeScheduler(
            .init(tickInterval: .milliseconds(50), deliveryQueue: delivery)) as? KeyedCountdownScheduler)
        defer { scheduler.shutdown() }
        try scheduler.restore(from: disk.store(folder))
        let heard = Locked<[CountdownEvent]>([])
        let observer: CountdownObserver = { event in heard.withLock { $0.append(event) } }
        try scheduler.start(key: "short", duration: .milliseconds(100), observer: observer)
        try scheduler.start(key: "long", duration: .seconds(30), observer: observer)
        scheduler.waitUntilStored()
        disk.block()
        // The short one's deadline passes while the write that removes it is stuck.
        #expect(waitUntil { disk.blockedWrites.withLock { $0 } == 1 }, "the finish was never written")
        settle(.milliseconds(150))
        #expect(scheduler.remaining(key: "short") == nil, "the key is free at once")
        #expect(!heard.withLock { $0.contains { $0.kind == .finished } }, "a finish was heard while the file still held it")
        // The queue is free meanwhile (the main thread of an app keeps drawing).
        let ran = Locked(false)
        delivery.async { ran.withLock { $0 = true } }
        #expect(waitUntil { ran.withLock { $0 } }, "the delivery queue was blocked by the write")
        disk.release()
        #expect(waitUntil { heard.withLock { $0.contains { $0.kind == .finished } } }, "the finish never came")
        #expect(try Set(stored(folder).keys) == ["long"])
        // In order: the short countdown's events end with its finish, and nothing of it follows.
        let short = heard.withLock { $0.filter { $0.key == "short" } }
        #expect(short.last?.kind == .finished && short.filter { $0.kind == .finished }.count == 1, "\(short)")
    }

    @Test("a finish decided just before a shutdown is heard, as without a store, and the writer goes quiet")
    func aFinishDecidedBeforeTheShutdown() throws {
        let folder = Folder()
        let delivery = DispatchQueue(label: "store-test.delivery")
        // run-loop: its timers fire on a thread of their own, so a countdown finishes while the
        // delivery queue is busy (the timestamp backend's ticker runs on the delivery queue).
        let scheduler = try #require(try CountdownBackend.runLoop.makeScheduler(
            .init(tickInterval: .milliseconds(50), deliveryQueue: delivery)) as? KeyedCountdownScheduler)
        try scheduler.restore(from: CountdownStore(path: folder.store))
        let finished = Locked(0)
        try scheduler.start(key: "k", duration: .milliseconds(30)) { event in
            if event.kind == .finished { finished.withLock { $0 += 1 } }
        }
        // Still running at the shutdown, which cancels it: a change after the last write.
        try scheduler.start(key: "long", duration: .seconds(30)) { _ in }
        // The delivery queue is busy while the countdown finishes and the scheduler shuts down:
        // the finish is decided, not yet delivered, when the table goes.
        let busy = DispatchSemaphore(value: 0)
        delivery.async { busy.wait() }
        #expect(waitUntil { scheduler.remaining(key: "k") == nil }, "the countdown never finished")
        scheduler.shutdown()
        busy.signal()
        #expect(waitUntil { finished.withLock { $0 } == 1 }, "the finish decided before the shutdown was never heard")
        settle(.milliseconds(100))
        #expect(finished.withLock { $0 } == 1)
    }

    @Test("the file's text: any key, any number, read back as written")
    func fileRoundTrip() throws {
        let awkward = ["\"quoted\"", "back\\slash", "new\nline\ttab", "nul\u{0}inside", "\u{1}\u{1F}\u{7F}", "e\u{301}",
                       "日本語", "👩‍👩‍👧", "\u{202E}rtl", "/slash", String(repeating: "x", count: 10_000), "{\"json\":[1]}"]
        var records: [CountdownRecord] = []
        for (index, key) in awkward.enumerated() {
            let state: CountdownRecord.State = switch index % 3 {
            case 0: .running(wallDeadline: Int64.max, bootDeadline: Int64.min + 1, bootID: "boot-\"\(index)\"")
            case 1: .running(wallDeadline: -1, bootDeadline: 0, bootID: nil)
            default: .paused(remaining: Int64(index) * 1_000_000_007)
            }
            records.append(CountdownRecord(key: key, state: state))
        }
        let file = StoreFile.encode(records)
        #expect(try StoreFile.decode(file, path: "test") == records)
        // And JSON any reader takes: the body alone, parsed by JSONSerialization.
        let body = file.drop { $0 != UInt8(ascii: "\n") }.dropFirst()
        #expect((try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["countdowns"] != nil)
    }

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
