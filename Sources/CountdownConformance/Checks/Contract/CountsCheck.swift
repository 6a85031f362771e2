import Countdown
import CountdownSupport
import Foundation

/// The `counts` check: while nothing changes, `activeCount` is the number of distinct running
/// and paused keys, and `activeKeys` lists each of them once, whatever attaches, replacements
/// and pauses came before.
enum CountsCheck {
    static let check = ConformanceCheck(
        "counts", .contract,
        "activeCount is the number of running and paused keys, and activeKeys lists each once, after attaches and pauses",
        body: run)

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(50))
        let s = h.scheduler
        let keys = (0..<12).map { "rate-limit:user:\(100_000 + $0)" }
        for key in keys { try s.start(key: key, duration: .seconds(60), observer: h.ignoring("start")) }
        // Attached again and again, by start and by attach(key:) and by a stream.
        for key in keys.prefix(6) {
            for _ in 0..<3 {
                _ = try s.start(key: key, duration: .seconds(60), observer: h.ignoring("start"))
                _ = s.attach(key: key, observer: h.ignoring("attach"))
            }
        }
        _ = s.events(key: keys[0])
        // Paused, some of them attached to while paused.
        for key in keys.suffix(5) { c.expect(s.pause(key: key), "pause(\(key)) returned false") }
        for key in keys.suffix(2) { _ = try s.start(key: key, duration: .seconds(60), observer: h.ignoring("start")) }
        c.expect(s.cancel(key: keys[1]), "cancel(\(keys[1])) returned false")
        h.drain()
        let expected = Set(keys).subtracting([keys[1]])
        // Read twice: nothing changes in between (every countdown lasts a minute).
        for reading in 1...2 {
            let count = s.activeCount, listed = s.activeKeys
            let duplicated = Dictionary(grouping: listed, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
            c.expect(duplicated.isEmpty, "reading \(reading): activeKeys lists \(duplicated) more than once (\(listed.count) entries for \(expected.count) keys)")
            c.expectEqual(Set(listed), expected, "reading \(reading): the set of activeKeys")
            c.expectEqual(count, expected.count, "reading \(reading): activeCount", "(7 running and 4 paused keys; activeKeys had \(listed.count) entries)")
            c.expectEqual(count, listed.count, "reading \(reading): activeCount against activeKeys.count")
        }
        c.figure("\(expected.count) keys (4 paused) after 37 attaches and a cancel")
    }
}
