import Countdown
import CountdownSupport
import Foundation

/// The `store.bad-file` check: a file that is not a store, is cut short, or comes from a newer
/// version makes `restore(from:)` throw, and is left exactly as it was, then and after the
/// scheduler has run a countdown without it.
enum StoreBadFileCheck {
    static let check = ConformanceCheck(
        "store.bad-file", .contract,
        "a corrupt, truncated or newer-version file: restore throws, and the file is left untouched", body: run)

    static func run(_ c: CheckContext) throws {
        let folder = try StoreFolder()
        defer { folder.remove() }
        // A real file first: the backend's own, with one countdown in it.
        guard let (written, writer, _) = try StoreFolder.restored(c, tick: .milliseconds(50), from: folder.path("good")) else { return }
        _ = try writer.start(key: "kept", duration: .seconds(60), observer: written.ignoring("start"))
        writer.waitUntilStored()
        guard let good = folder.bytes("good"), let newline = good.firstIndex(of: 0x0A) else {
            return c.fail("after a start and waitUntilStored(), the store's file is missing or has no header line")
        }
        let header = String(decoding: good[..<newline], as: UTF8.self).split(separator: " ")
        var newer = Data(([header.first.map(String.init) ?? "", "999"] + header.dropFirst(2).map(String.init)).joined(separator: " ").utf8)
        newer.append(good[newline...])
        let files: [(String, Data)] = [
            ("not a store", Data("{\"countdowns\": []}\n".utf8)),
            ("cut short", good.prefix(good.count - max(good.count / 3, 1))),
            ("from a newer version (999)", newer),
        ]
        for (what, bytes) in files {
            let name = "bad-\(what.prefix(3))"
            try folder.put(bytes, as: name)
            let h = try c.makeScheduler(tick: .milliseconds(50))
            guard let keyed = h.scheduler as? any KeyedCountdownScheduler else { return }
            do {
                let restoration = try keyed.restore(from: StoreFolder.store(folder.path(name), for: h))
                c.fail("a file \(what): restore(from:) succeeded (\(restoration.running.count) running), not a CountdownStoreError")
            } catch {
                // The typed error, as the signature promises.
            }
            _ = try keyed.start(key: "after", duration: .milliseconds(60), observer: h.ignoring("start"))
            keyed.waitUntilStored()
            c.expect(folder.bytes(name) == bytes, "a file \(what): changed by a failed restore, or by the scheduler running after it")
        }
        c.figure("3 bad files (not a store, cut short, a newer version): each refused with a CountdownStoreError and left as it was")
    }
}
