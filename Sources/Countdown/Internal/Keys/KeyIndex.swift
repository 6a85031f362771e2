import CountdownPrefetch

/// Key → place in the slab: open addressing over 8-byte entries, split over 64 shards by the
/// key's hash. It holds no key: a probe whose entry's hash matches asks its caller whether the
/// place there holds the key (the slab keeps every key, once).
///
/// An entry is a place and the high 32 bits of its key's hash, so that a lookup reads one
/// contiguous line before it reads a key, a mismatch almost never reads one, and a growth
/// rehashes from the entries alone. A dictionary of `String` keys held every key a second
/// time and read several lines per probe (its metadata, its key, the key's bytes, its value),
/// each a cache miss at a million keys.
///
/// A growth doubles one shard, a sixty-fourth of the keys, so it stalls the table's lock a
/// sixty-fourth as long as one index would. Linear probing, deletion by shifting back the
/// entries that follow (no tombstones), at most three quarters full.
///
/// A key's string is hashed once per call (``hash(_:)``): the hash picks the shard, the bucket
/// and the entry's tag. It is canonical equivalence's, as `String`'s `==` is (``KeyHash``).
struct KeyIndex {
    private static var shardBits: Int { 6 }
    private var shards = [Shard](repeating: Shard(), count: 1 << KeyIndex.shardBits)
    private(set) var count = 0
    /// Seeded once per index, and kept when the index is emptied: a hash computed before a
    /// lock was taken stays this index's.
    let hasher: KeyHash

    init(hasher: KeyHash = KeyHash()) {
        self.hasher = hasher
    }

    /// `key`'s hash, for a probe.
    func hash(_ key: String) -> Hash { Hash(key, hasher: hasher) }

    /// A key's hash, computed once: its low bits choose the shard, its high 32 the bucket and
    /// the tag kept in the entry.
    struct Hash: Equatable {
        let value: UInt64

        init(value: UInt64) { self.value = value }

        /// `key` hashed by `hasher`: an index's hash when it is the index's ``KeyIndex/hasher``.
        init(_ key: String, hasher: KeyHash) { value = hasher(key) }

        fileprivate var shard: Int { Int(truncatingIfNeeded: value) & ((1 << KeyIndex.shardBits) - 1) }
        fileprivate var tag: UInt32 { UInt32(truncatingIfNeeded: value >> 32) }
    }

    /// Where a probe ended: at the key's entry (`place` set) or at the empty bucket it would go in.
    struct Probe {
        let hash: Hash
        fileprivate let bucket: Int
        let place: UInt32?
    }

    /// Finds `hash`'s key. `holds(place)` says whether the place an entry with the same tag
    /// names holds the key; it is asked only then.
    func probe(_ hash: Hash, holds: (UInt32) -> Bool) -> Probe {
        let shard = shards[hash.shard]
        guard !shard.entries.isEmpty else { return Probe(hash: hash, bucket: -1, place: nil) }
        var bucket = shard.home(hash.tag)
        while true {
            let entry = shard.entries[bucket]
            if entry == Shard.empty { return Probe(hash: hash, bucket: bucket, place: nil) }
            if Shard.tag(entry) == hash.tag, holds(Shard.place(entry)) {
                return Probe(hash: hash, bucket: bucket, place: Shard.place(entry))
            }
            bucket = (bucket + 1) & shard.mask
        }
    }

    /// Hints that a lookup of `hash` comes soon: the line of the bucket it begins at is fetched
    /// while the caller does something else (a batch of fires, the finishes among them).
    func prefetchHome(_ hash: Hash) {
        let shard = shards[hash.shard]
        countdown_prefetch(UnsafeRawPointer(bitPattern: shard.address &+ (UInt(hash.tag) & shard.addressMask) &* 8))
    }

    /// Enters `place` for the key a probe did not find; nothing may have changed since.
    mutating func insert(_ probe: Probe, place: UInt32) {
        precondition(probe.place == nil, "the key is in the index already")
        count += 1
        shards[probe.hash.shard].insert(tag: probe.hash.tag, place: place, at: probe.bucket)
    }

    /// Removes the entry a probe found; nothing may have changed since.
    mutating func remove(_ probe: Probe) {
        guard probe.place != nil else { return }
        count -= 1
        shards[probe.hash.shard].remove(at: probe.bucket)
    }

    /// Removes the entry of the key hashed `hash` at `place`, found without reading a key.
    mutating func remove(_ hash: Hash, place: UInt32) {
        let shard = hash.shard
        guard let bucket = shards[shard].bucket(tag: hash.tag, place: place) else { return }
        count -= 1
        shards[shard].remove(at: bucket)
    }

    private struct Shard {
        /// No place is `UInt32.max` (the slab never grows that far).
        static let empty = UInt64.max
        var entries: [UInt64] = []
        var count = 0
        /// Where `entries` were stored when they last grew, and their mask, for a prefetch
        /// alone: reaching the buffer through the array retains it and reads its header, a
        /// miss of its own. Never dereferenced; stale in a copy, where a hint costs nothing.
        var address: UInt = 0
        var addressMask: UInt = 0

        var mask: Int { entries.count - 1 }

        static func tag(_ entry: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: entry >> 32) }
        static func place(_ entry: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: entry) }
        static func entry(tag: UInt32, place: UInt32) -> UInt64 { UInt64(tag) << 32 | UInt64(place) }

        func home(_ tag: UInt32) -> Int { Int(tag) & mask }

        func bucket(tag: UInt32, place: UInt32) -> Int? {
            guard !entries.isEmpty else { return nil }
            let wanted = Self.entry(tag: tag, place: place)
            var bucket = home(tag)
            while entries[bucket] != Self.empty {
                if entries[bucket] == wanted { return bucket }
                bucket = (bucket + 1) & mask
            }
            return nil
        }

        /// `bucket`: the empty bucket a probe ended at, or -1 for an empty shard.
        mutating func insert(tag: UInt32, place: UInt32, at bucket: Int) {
            var bucket = bucket
            if bucket < 0 || (count + 1) * 4 > entries.count * 3 {
                grow()
                bucket = home(tag)
                while entries[bucket] != Self.empty { bucket = (bucket + 1) & mask }
            }
            entries[bucket] = Self.entry(tag: tag, place: place)
            count += 1
        }

        /// Empties `bucket`, and moves back each entry of the run after it that may not be
        /// left beyond the hole (its home is not in the stretch between the hole and it).
        mutating func remove(at bucket: Int) {
            count -= 1
            entries.withUnsafeMutableBufferPointer { entries in
                let mask = entries.count - 1
                var hole = bucket
                var next = (hole + 1) & mask
                while entries[next] != Self.empty {
                    let home = Int(Self.tag(entries[next])) & mask
                    // Stays when its home lies cyclically in (hole, next].
                    let stays = hole <= next ? (hole < home && home <= next) : (hole < home || home <= next)
                    if !stays {
                        entries[hole] = entries[next]
                        hole = next
                    }
                    next = (next + 1) & mask
                }
                entries[hole] = Self.empty
            }
        }

        mutating func grow() {
            let old = entries
            entries = [UInt64](repeating: Self.empty, count: max(16, old.count * 2))
            let mask = self.mask
            for entry in old where entry != Self.empty {
                var bucket = Int(Self.tag(entry)) & mask
                while entries[bucket] != Self.empty { bucket = (bucket + 1) & mask }
                entries[bucket] = entry
            }
            address = entries.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
            addressMask = UInt(mask)
        }
    }
}
