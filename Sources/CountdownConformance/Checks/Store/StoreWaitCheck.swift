import Countdown
import CountdownSupport
import Foundation

/// The `store.wait` check: `waitUntilStored()` returns only once the file holds every change
/// made before it. Three rounds of starts, cancels and pauses, each followed by the wait and a
/// copy of the file taken at once; each copy, restored, has exactly what ran and what was paused.
enum StoreWaitCheck {
    static let check = ConformanceCheck(
        "store.wait", .contract,
        "waitUntilStored() returns only once the file holds every change made before it", body: run)

    static func run(_ c: CheckContext) throws {
        let folder = try StoreFolder()
        defer { folder.remove() }
        guard let (h, keyed, _) = try StoreFolder.restored(c, tick: .milliseconds(50), from: folder.path("store")) else { return }
        var running = Set<String>(), paused = Set<String>()
        // Three of each four stay (running or paused) through three rounds: within a declared capacity.
        let perRound = min(20, max(4, (keyed.profile.capacity ?? 80) * 4 / 9 / 4 * 4))
        for round in 0..<3 {
            for index in 0..<perRound {
                let key = "store:wait:\(round):\(index)"
                _ = try keyed.start(key: key, duration: .seconds(60), observer: h.ignoring("start"))
                switch index % 4 {
                case 1: _ = keyed.cancel(key: key)
                case 2: _ = keyed.pause(key: key); paused.insert(key)
                default: running.insert(key)
                }
            }
            keyed.waitUntilStored()
            let name = "copy-\(round)"
            try folder.put(folder.bytes("store"), as: name)
            guard let (_, _, restoration) = try StoreFolder.restored(c, tick: .milliseconds(50), from: folder.path(name), at: h.now()) else { return }
            let missing = running.subtracting(restoration.running.keys).count + paused.subtracting(restoration.paused.keys).count
            let extra = Set(restoration.running.keys).subtracting(running).count + Set(restoration.paused.keys).subtracting(paused).count
            c.expect(missing == 0 && extra == 0,
                     "round \(round): waitUntilStored() returned, and the file then held \(restoration.running.count) running and \(restoration.paused.count) paused, not \(running.count) and \(paused.count)")
        }
        c.figure("3 rounds of \(perRound) starts, \(perRound / 4) cancels and \(perRound / 4) pauses: each copy taken after waitUntilStored() held them all")
    }
}
