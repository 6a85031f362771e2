/// Key → place in the slab, split over 64 dictionaries by the key's hash.
///
/// A dictionary grows by rehashing every key it holds, all at once: at a million countdowns
/// one dictionary would hold the table's lock for the whole rehash of hundreds of thousands
/// of keys, and every tick due meanwhile would wait. A shard holds a sixty-fourth of the
/// keys, so a growth stalls the table a sixty-fourth as long.
///
/// A key's string is hashed once per call: the hash picks the shard and is what the shard's
/// dictionary hashes, and it is kept with the key, so a growth rehashes integers, not strings.
/// (Real keys are longer than the 15 bytes Swift stores inline: hashing one walks its bytes on
/// the heap, and checks they are in normal form, canonically equal keys hashing alike.)
struct KeyIndex {
    private static let shardCount = 64
    private var shards = [[HashedKey: UInt32]](repeating: [:], count: shardCount)
    private(set) var count = 0

    /// A key with its string's hash, which is all a dictionary hashes of it; equality is the
    /// string's (canonical equivalence), checked only where the hashes agree.
    struct HashedKey: Hashable {
        let key: String
        let hash: Int

        init(_ key: String) {
            self.key = key
            hash = key.hashValue
        }

        static func == (a: HashedKey, b: HashedKey) -> Bool { a.hash == b.hash && a.key == b.key }
        func hash(into hasher: inout Hasher) { hasher.combine(hash) }

        var shard: Int { Int(truncatingIfNeeded: UInt(bitPattern: hash) % UInt(KeyIndex.shardCount)) }
    }

    subscript(key: String) -> UInt32? {
        let hashed = HashedKey(key)
        return shards[hashed.shard][hashed]
    }

    /// One probe: the value under `key`, or nil after entering `reserved` under it.
    mutating func valueOrInsert(_ key: String, _ reserved: UInt32) -> UInt32? {
        let hashed = HashedKey(key)
        let found = Self.take(&shards[hashed.shard][hashed, default: .max], orPut: reserved)
        if found == nil { count += 1 }
        return found
    }

    private static func take(_ entry: inout UInt32, orPut value: UInt32) -> UInt32? {
        guard entry == .max else { return entry }
        entry = value
        return nil
    }

    @discardableResult
    mutating func removeValue(forKey key: String) -> UInt32? {
        let hashed = HashedKey(key)
        let removed = shards[hashed.shard].removeValue(forKey: hashed)
        if removed != nil { count -= 1 }
        return removed
    }

    var keys: [String] {
        var all: [String] = []
        all.reserveCapacity(count)
        for shard in shards { all.append(contentsOf: shard.keys.lazy.map(\.key)) }
        return all
    }
}
