/// Key → place in the slab, split over 64 dictionaries by the key's hash.
///
/// A dictionary grows by rehashing every key it holds, all at once: at a million countdowns
/// one dictionary would hold the table's lock for the whole rehash of hundreds of thousands
/// of keys, and every tick due meanwhile would wait. A shard holds a sixty-fourth of the
/// keys, so a growth stalls the table a sixty-fourth as long.
struct KeyIndex {
    private static let shardCount = 64
    private var shards = [[String: UInt32]](repeating: [:], count: shardCount)
    private(set) var count = 0

    private static func shard(of key: String) -> Int {
        Int(truncatingIfNeeded: UInt(bitPattern: key.hashValue) % UInt(shardCount))
    }

    subscript(key: String) -> UInt32? {
        shards[Self.shard(of: key)][key]
    }

    /// One probe: the value under `key`, or nil after entering `reserved` under it.
    mutating func valueOrInsert(_ key: String, _ reserved: UInt32) -> UInt32? {
        let shard = Self.shard(of: key)
        let found = Self.take(&shards[shard][key, default: .max], orPut: reserved)
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
        let removed = shards[Self.shard(of: key)].removeValue(forKey: key)
        if removed != nil { count -= 1 }
        return removed
    }

    var keys: [String] {
        var all: [String] = []
        all.reserveCapacity(count)
        for shard in shards { all.append(contentsOf: shard.keys) }
        return all
    }
}
