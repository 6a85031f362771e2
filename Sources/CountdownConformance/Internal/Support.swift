import CountdownSupport
import Foundation

/// A small deterministic generator: the randomized checks replay exactly from their seed.
struct SplitMix {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform enough in 0..<bound for choosing operations.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

/// The process's OS threads, from /proc (Linux). A scheduler's own threads are told apart by
/// when they appear: while it is being made or first used, with creation serialized by
/// ``creation`` across the suite. libdispatch's pool workers are not a scheduler's own; they
/// name themselves "…qos…" moments after they start, so names are judged at the end, not when
/// a thread appears (a new thread carries its creator's name until it names itself).
enum OSThreads {
    /// Held while the suite makes a scheduler, so threads appearing then are that scheduler's.
    static let creation = Locked(())

    /// Thread id → name; nil where /proc cannot be read (Apple platforms). The listing can fail
    /// when a thread exits while it is read, so it is tried a few times: a failed read must not
    /// pass for "no threads".
    static func current() -> [Int: String]? {
        var listing: [String]?
        for _ in 0..<5 where listing == nil {
            listing = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        }
        guard let ids = listing else { return nil }
        var threads: [Int: String] = [:]
        for id in ids.compactMap(Int.init) {
            let name = (try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)) ?? ""
            threads[id] = name.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return threads
    }

    /// Starts a thread of the suite's own. Under ``creation``, so that it never appears inside
    /// another check's window and is taken for a scheduler's thread.
    static func start(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            nameCurrentThread(name)
            body()
        }
        creation.withLock { _ in thread.start() }
    }

    /// Threads present now that were not in `before`.
    static func started(since before: [Int: String]?) -> Set<Int> {
        guard let before, let now = current() else { return [] }
        return Set(now.keys.filter { before[$0] == nil })
    }

    /// Runs `body` and returns, with its answer, the threads it started (directly or through
    /// threads it started): those that appeared meanwhile and carry ``ThreadMark``'s mark. A
    /// thread still starting 2 s on counts as its own, so that a leak is never passed for want
    /// of a reading; one that exited before it was read cannot outlive anything.
    static func watching<T>(_ body: () throws -> T) rethrows -> (T, Set<Int>) {
        let before = current()
        let answer = try ThreadMark.marking(body)
        var starting = started(since: before)
        var own: Set<Int> = []
        _ = realTimeWait(timeout: .seconds(2)) {
            for id in starting {
                let reading = ThreadMark.read(id)
                if reading == .marked { own.insert(id) }
                if reading != .starting { starting.remove(id) }
            }
            return starting.isEmpty
        }
        return (answer, own.union(starting))
    }

    /// Neither libdispatch's workers ("…qos…") nor the suite's own threads ("conformance…")
    /// belong to a scheduler, whenever they appear.
    private static func isForeign(_ name: String) -> Bool {
        name.contains("qos") || name.hasPrefix("conformance")
    }

    /// Waits until none of `threads` runs any more (foreign ones aside); returns the others
    /// still running at `timeout`. Reads only their own entries, each poll: a listing of every
    /// thread reads hundreds of files in a loaded test process, every 2 ms for up to the whole
    /// timeout, and took most of a core from the checks beside it.
    static func waitForExit(_ threads: Set<Int>, timeout: Duration) -> [String] {
        // Until /proc has been read, every one of them counts as running.
        var running = Dictionary(uniqueKeysWithValues: threads.map { ($0, "unread") })
        _ = realTimeWait(timeout: timeout) {
            running = [:]
            for id in threads {
                switch state(of: id) {
                case .exited: continue
                case .running(let name): if !isForeign(name) { running[id] = name }
                case .unknown: running[id] = "unread"  // unknown is not "exited"
                }
            }
            return running.isEmpty
        }
        return running.sorted { $0.key < $1.key }.map { "\($0.value) (tid \($0.key))" }
    }

    private enum ThreadState {
        case running(name: String)
        case exited
        case unknown
    }

    /// Thread `id` of this process, from its own /proc entry alone.
    private static func state(of id: Int) -> ThreadState {
        let descriptor = open("/proc/self/task/\(id)/comm", O_RDONLY)
        guard descriptor >= 0 else { return errno == ENOENT || errno == ESRCH ? .exited : .unknown }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        // A thread that exits while its entry is open reads as an error: it has gone.
        guard count >= 0 else { return errno == ESRCH || errno == ENOENT ? .exited : .unknown }
        let name = String(decoding: bytes[..<count], as: UTF8.self)
        return .running(name: name.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}

/// Runs `body(0..<count)` on `count` threads of its own at once and waits for all of them.
/// Not `DispatchQueue.concurrentPerform`: with libdispatch's pool busy (a backend that parks its
/// threads) that runs every iteration on the calling thread, one after another.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchSemaphore(value: 0)
    let go = DispatchSemaphore(value: 0)
    for index in 0..<count {
        OSThreads.start("conformance-\(index)") {
            go.wait()  // all start together
            body(index)
            done.signal()
        }
    }
    for _ in 0..<count { go.signal() }
    for _ in 0..<count { done.wait() }
}
