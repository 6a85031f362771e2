import CountdownSupport
import Dispatch
import Foundation
import Testing

@testable import Countdown
@testable import CountdownBenchKit
@testable import CountdownConformance

/// `CountdownStore`: what a relaunched process gets back, and what a bad file does (a typed

/// The store's writer: writes in the background, a finish held for its write, the file's text.
extension StoreTests {
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
        // Stuck before the countdowns start, so that whatever the machine's load, every write
        // from here on waits, the one that would take the short one out of the file too.
        // (Blocked after the starts, a short countdown that finished before the block was
        // written and heard, and the test blamed the store: seen beside stress-ng.)
        disk.block()
        try scheduler.start(key: "short", duration: .milliseconds(100), observer: observer)
        try scheduler.start(key: "long", duration: .seconds(30), observer: observer)
        #expect(waitUntil { disk.blockedWrites.withLock { $0 } == 1 }, "no write began")
        // The short one's deadline passes while every write is stuck: its finish is decided
        // (the key is free), and whatever was queued for the delivery queue by then has run.
        #expect(waitUntil { scheduler.remaining(key: "short") == nil }, "the short countdown never finished")
        delivery.sync {}
        #expect(!heard.withLock { $0.contains { $0.kind == .finished } }, "a finish was heard while no write had taken it out of the file")
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
}
