#if Redis
/// The Redis Cluster hash slot of a key, as the server computes it (`CLUSTER KEYSLOT`): CRC16
/// (XMODEM) of the key, or of its hash tag (what lies between the first `{` and the next `}`,
/// when not empty), modulo 16 384. Keys with one tag share a slot, so one script may touch them.
enum ClusterSlot {
    static let count = 16_384

    static func of(_ key: String) -> Int {
        let bytes = Array(key.utf8)
        var hashed = bytes[...]
        if let open = bytes.firstIndex(of: UInt8(ascii: "{")),
           let close = bytes[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1 {
            hashed = bytes[(open + 1)..<close]
        }
        return Int(crc16(hashed)) % count
    }

    /// CRC-16/XMODEM: polynomial 0x1021, initial value 0, no reflection.
    static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return crc
    }
}
#endif
