import Countdown
import CountdownSupport
import Foundation

/// The `store.finish` check: a finish is heard only once the file no longer holds its
/// countdown. A copy of the file taken inside the finish's callback is what a process killed
/// there would relaunch from: restored, it must bring nothing of that countdown back (not
/// running, not expired), or the finish is heard twice.
enum StoreFinishCheck {
    static let check = ConformanceCheck(
        "store.finish", .contract,
        "a finish is heard only once the file no longer holds its countdown: a copy taken in its callback restores nothing of it", body: run)

    static func run(_ c: CheckContext) throws {
        let folder = try StoreFolder()
        defer { folder.remove() }
        guard let (h, keyed, _) = try StoreFolder.restored(c, tick: .milliseconds(50), from: folder.path("store")) else { return }
        // Ballast: a file of many countdowns takes milliseconds to write, longer than a
        // delivery takes, so that a finish that does not wait for its write is heard while the
        // file still holds it (with a small file the write often wins the race anyway).
        // None for a backend that declares a capacity: each of its countdowns holds a resource
        // (a sleeping worker), and ballast would starve the three judged here.
        let ballast = keyed.profile.capacity == nil ? 2_000 : 0
        for index in 0..<ballast { _ = try keyed.start(key: "store:ballast:\(index)", duration: .seconds(60), observer: h.ignoring("start")) }
        keyed.waitUntilStored()
        let copies = Locked<[String: Data?]>([:])
        let keys = (0..<3).map { "store:finish:\($0)" }
        for (index, key) in keys.enumerated() {
            let log = h.recorder()
            let record = log.observer
            _ = try keyed.start(key: key, duration: .milliseconds(150 + 40 * index)) { event in
                // What a process killed inside this callback would find at its relaunch.
                if event.kind == .finished { copies.withLock { $0[key] = folder.bytes("store") } }
                record(event)
            }
        }
        guard c.expect(h.waitUntil { copies.withLock { $0.count } == keys.count }, "the three countdowns of 150-230 ms were not all heard to finish within 10 s") else { return }
        for (index, key) in keys.enumerated() {
            let name = "copy-\(index)"
            try folder.put(copies.withLock { $0[key] } ?? nil, as: name)
            guard let (_, _, restoration) = try StoreFolder.restored(c, tick: .milliseconds(50), from: folder.path(name), at: h.now()) else { return }
            let found = StoreFolder.mentions(key, in: restoration)
            c.expect(found.isEmpty,
                     "\(key): the file still held it while its finish was being heard: relaunched from a copy taken then, it comes back \(found.joined(separator: ", ")) (a finish heard twice)")
        }
        c.figure("3 finishes beside \(ballast) countdowns, each file copied in the finish's callback and restored: \(c.failures.isEmpty ? "nothing came back" : "see the failures")")
    }
}
