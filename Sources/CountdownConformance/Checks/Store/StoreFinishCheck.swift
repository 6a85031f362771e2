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

    static let finishes = 12

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
        // A finish delivered before its write escapes whenever the write wins the race, as it
        // may under load for any one finish (about one in six, beside `stress-ng --cpu 2`):
        // twelve finishes 30 ms apart, each a race of its own, leave it no run to hide in.
        let keys = (0..<Self.finishes).map { "store:finish:\($0)" }
        for (index, key) in keys.enumerated() {
            let log = h.recorder()
            let record = log.observer
            _ = try keyed.start(key: key, duration: .milliseconds(150 + 30 * index)) { event in
                // What a process killed inside this callback would find at its relaunch.
                if event.kind == .finished { copies.withLock { $0[key] = folder.bytes("store") } }
                record(event)
            }
        }
        guard c.expect(h.waitUntil { copies.withLock { $0.count } == keys.count },
                       "the \(keys.count) countdowns of 150-\(150 + 30 * (keys.count - 1)) ms were not all heard to finish within 10 s") else { return }
        for (index, key) in keys.enumerated() {
            let name = "copy-\(index)"
            let copy = copies.withLock { $0[key] } ?? nil
            try folder.put(copy, as: name)
            // A relaunch costs a restore of the ballast: the last copy is relaunched whatever it
            // holds, the others when the file's records name the key (what a relaunch reads).
            let holds = copy.map { (try? StoreFile.decode($0, path: folder.path(name)))?.contains { $0.key == key } ?? true } ?? false
            guard index == keys.count - 1 || holds else { continue }
            guard let (_, _, restoration) = try StoreFolder.restored(c, tick: .milliseconds(50), from: folder.path(name), at: h.now()) else { return }
            let found = StoreFolder.mentions(key, in: restoration)
            c.expect(found.isEmpty,
                     "\(key): the file still held it while its finish was being heard: relaunched from a copy taken then, it comes back \(found.joined(separator: ", ")) (a finish heard twice)")
        }
        c.figure("\(keys.count) finishes beside \(ballast) countdowns, each file copied in the finish's callback (those that name the key, and the last, restored): \(c.failures.isEmpty ? "nothing came back" : "see the failures")")
    }
}
