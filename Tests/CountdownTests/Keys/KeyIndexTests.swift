import Testing

@testable import Countdown
@testable import CountdownConformance

/// The key index against a dictionary, without time: hashes are made up so that tags collide,
/// runs wrap around the end of a shard, and removals shift entries back across the wrap.
@Suite("CountdownTable key index")
struct KeyIndexTests {
    /// A made-up hash for key number `key`: few distinct tags (so that probes meet entries of
    /// other keys with the same tag), all in a handful of shards; half of them at the top of
    /// the tag range, so that their runs start at a shard's last buckets and wrap around.
    static func hash(_ key: Int) -> KeyIndex.Hash {
        let tag = key % 2 == 0 ? UInt32(key % 5) : UInt32.max - UInt32(key % 5)
        return KeyIndex.Hash(value: UInt64(tag) << 32 | UInt64(key % 3))
    }

    @Test("every insert, lookup and removal agrees with a dictionary, across growths and colliding tags")
    func agreesWithADictionary() {
        var index = KeyIndex()
        var model: [Int: UInt32] = [:]  // key → place
        var keyAt: [UInt32: Int] = [:]  // place → key: what the slab would hold
        var nextPlace: UInt32 = 0
        // Seeded, so that a failure replays.
        var random = SplitMix(seed: 20_261_125)
        for step in 0..<20_000 {
            let key = Int.random(in: 0..<600, using: &random)
            let hash = Self.hash(key)
            let probe = index.probe(hash) { keyAt[$0] == key }
            #expect(probe.place == model[key], "step \(step): key \(key) found at \(String(describing: probe.place)), not \(String(describing: model[key]))")
            switch (probe.place, Int.random(in: 0..<3, using: &random)) {
            case (nil, _):
                index.insert(probe, place: nextPlace)
                model[key] = nextPlace
                keyAt[nextPlace] = key
                nextPlace += 1
            case (let place?, 0):
                index.remove(probe)
                model[key] = nil
                keyAt[place] = nil
            case (let place?, 1):
                // A finish: removed by hash and place, no key read.
                index.remove(hash, place: place)
                model[key] = nil
                keyAt[place] = nil
            default:
                break
            }
            #expect(index.count == model.count)
        }
        for key in 0..<600 {
            #expect(index.probe(Self.hash(key)) { keyAt[$0] == key }.place == model[key], "key \(key) at the end")
        }
    }

    @Test("a key's real hash finds it; canonically equivalent keys are one key, and another is not found")
    func realKeys() {
        var index = KeyIndex()
        let keys = (0..<5_000).map { "rate-limit:user:\(1_000_000 + $0)" }
        for (place, key) in keys.enumerated() {
            let probe = index.probe(index.hash(key)) { keys[Int($0)] == key }
            #expect(probe.place == nil)
            index.insert(probe, place: UInt32(place))
        }
        for (place, key) in keys.enumerated() {
            #expect(index.probe(index.hash(key)) { keys[Int($0)] == key }.place == UInt32(place))
        }
        // "e\u{301}" and "é" are one key: canonically equivalent strings hash alike.
        var accents = KeyIndex()
        let stored = ["caf\u{E9}"]
        let first = accents.probe(accents.hash(stored[0])) { stored[Int($0)] == "caf\u{E9}" }
        accents.insert(first, place: 0)
        #expect(accents.probe(accents.hash("cafe\u{301}")) { stored[Int($0)] == "cafe\u{301}" }.place == 0)
        #expect(accents.probe(accents.hash("cafe")) { stored[Int($0)] == "cafe" }.place == nil)
    }
}

