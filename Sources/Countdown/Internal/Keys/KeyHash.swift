/// Hashes a key for the ``KeyIndex``: a seeded multiply-and-fold over the bytes of the key's
/// NFC form, eight at a time.
///
/// `String`'s own hash (SipHash-1-3 through `Hasher`) took about 340 instructions for a key of
/// 23–26 bytes, an eighth of a `start`; this takes about 110 (callgrind, the same keys; in
/// wall-clock time a few percent of a start, whose cost is mostly atomic reference counting,
/// locks and clock reads). Canonical equivalence is kept as `String`'s `==` keeps it: the
/// bytes hashed are those of the NFC form, as the standard library computes it for its own
/// hashing and comparison, so keys that are `==` hash alike. An ASCII key is its own NFC form
/// and is hashed in place; any other is normalized first ("K" and the Kelvin sign U+212A are
/// one key, "é" and "e" with a combining accent another).
///
/// The seed is drawn once per index from the system's random source and never leaves the
/// process: without it, keys cannot be chosen to collide (a server's keys come from its
/// users). Not a cryptographic hash; what a flood of chosen keys needs is the seed.
struct KeyHash {
    let seed: UInt64

    init(seed: UInt64) { self.seed = seed }

    init() {
        var generator = SystemRandomNumberGenerator()
        seed = generator.next()
    }

    func callAsFunction(_ key: String) -> UInt64 {
        if let hash = key.utf8.withContiguousStorageIfAvailable({ hashIfASCII(UnsafeRawBufferPointer($0)) }),
            let hash
        {
            return hash
        }
        // Not ASCII (or not stored contiguously): the NFC form's bytes, hashed the same way.
        var normalized: [UInt8] = []
        normalized.reserveCapacity(key.utf8.count)
        key._withNFCCodeUnits { normalized.append($0) }
        return normalized.withUnsafeBytes { hash($0) }
    }

    /// The hash of `bytes`, or nil when a byte is not ASCII (the bytes are then not the NFC
    /// form's, or may not be). One pass: the check rides on the words hashed.
    private func hashIfASCII(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        var seen: UInt64 = 0
        let hash = hash(bytes, seen: &seen)
        return seen & 0x8080_8080_8080_8080 == 0 ? hash : nil
    }

    func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var seen: UInt64 = 0
        return hash(bytes, seen: &seen)
    }

    /// `seen`: every word read, or-ed together.
    private func hash(_ bytes: UnsafeRawBufferPointer, seen: inout UInt64) -> UInt64 {
        let count = bytes.count
        var state = seed ^ (UInt64(truncatingIfNeeded: count) &* 0x9E37_79B9_7F4A_7C15)
        var offset = 0
        while count - offset > 8 {
            let word = Self.word(bytes, at: offset)
            seen |= word
            state = Self.fold(state ^ word, 0xA076_1D64_78BD_642F)
            offset += 8
        }
        // The last one to eight bytes: the word that ends with the key (overlapping the one
        // before; the count is in the state), or a shorter key's bytes alone.
        var last: UInt64 = 0
        if count >= 8 {
            last = Self.word(bytes, at: count - 8)
        } else {
            for index in 0..<count { last |= UInt64(bytes[index]) << (8 * UInt64(index)) }
        }
        seen |= last
        state = Self.fold(state ^ last, 0xE703_7ED1_A0B4_28DB)
        return Self.fold(state, 0x8EBC_6AF0_9C88_C6E3)
    }

    private static func word(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// The full 128-bit product, its halves xor-ed: every bit of either factor reaches the result.
    private static func fold(_ a: UInt64, _ b: UInt64) -> UInt64 {
        let product = a.multipliedFullWidth(by: b)
        return product.high ^ product.low
    }
}
