import Synchronization

/// The word a delivery reads, without the table's lock, to know whether its observer may still
/// hear it: one per place, written under the table's lock alone.
///
/// It holds two thresholds. A delivery passes when its registration is at least `revokedBelow`
/// (a cancel, a replacing attach, a detach or a shutdown moved it past every earlier
/// registration of the place) and its pause generation at least `silencedBelow` (a pause moved
/// it past every event decided before). Both only grow, so a place's words never admit what
/// they once refused.
///
/// A place is reused at once after a cancel (its last registration is revoked, or has nothing
/// left to deliver), but after a finish only once the finish has been delivered
/// (``CountdownTable/finishedPlaces``): revoking the next occupant must not silence what the
/// last one still has queued.
struct DeliveryGate: @unchecked Sendable {
    // @unchecked: a pointer into ``DeliveryGates``' storage, which never moves and is freed only
    // when the last table holding it goes: the engine holds both the table and every queued
    // delivery, and a drain holds the engine. The word is an atomic: the table stores, the
    // delivery queue loads.
    let word: UnsafeMutablePointer<Atomic<UInt64>>

    /// Whether a delivery of `registration` and pause `generation` may still be heard.
    ///
    /// Registrations compare as serial numbers (RFC 1982): a place reused at a thousand
    /// registrations a second wraps in 50 days, and what is still queued is always within
    /// 2³¹ registrations of the gate. (A place's pause generation stops below
    /// ``Delivery/answer`` and never wraps.)
    func admits(registration: UInt32, generation: UInt32) -> Bool {
        let thresholds = word.pointee.load(ordering: .acquiring)
        return Self.isAtLeast(registration, UInt32(truncatingIfNeeded: thresholds >> 32))
            && generation >= UInt32(truncatingIfNeeded: thresholds)
    }

    /// Refuses every registration below `registration`. Under the table's lock only.
    func revoke(below registration: UInt32) {
        let thresholds = word.pointee.load(ordering: .relaxed)
        word.pointee.store(UInt64(registration) << 32 | (thresholds & 0xFFFF_FFFF), ordering: .releasing)
    }

    private static func isAtLeast(_ a: UInt32, _ b: UInt32) -> Bool { Int32(bitPattern: a &- b) >= 0 }

    /// Refuses every pause generation below `generation`. Under the table's lock only.
    func silence(below generation: UInt32) {
        let thresholds = word.pointee.load(ordering: .relaxed)
        guard generation > UInt32(truncatingIfNeeded: thresholds) else { return }
        word.pointee.store(thresholds & ~0xFFFF_FFFF | UInt64(generation), ordering: .releasing)
    }
}

/// Every place's ``DeliveryGate``, in chunks that never move, made as the slab grows.
struct DeliveryGates {
    /// 8 KiB a chunk (1 024 gates): made under the table's lock, and every word of it written
    /// (an atomic is initialized), so a chunk's cost is paid at once. 64 KiB chunks made a
    /// thousand countdowns 64 B resident each and put a 10 µs start into every 8 192.
    private static var chunkShift: Int { 10 }
    private static var chunkSize: Int { 1 << chunkShift }
    private var chunks: [UnsafeMutablePointer<Atomic<UInt64>>] = []
    /// Frees the chunks with the last table that holds them.
    private let storage = Storage()

    init() {}

    /// The gate of the place at `index`, made (admitting everything) when it is new. Inlined:
    /// every event decided asks for one, and a call here also copied each event through its
    /// value witnesses (callgrind: about 200 instructions more a fire).
    @inline(__always)
    mutating func gate(at index: Int) -> DeliveryGate {
        if index >> Self.chunkShift >= chunks.count { makeChunks(through: index >> Self.chunkShift) }
        return DeliveryGate(word: word(at: index))
    }

    /// The word of the place at `index`, whose chunk was made.
    @inline(__always)
    private func word(at index: Int) -> UnsafeMutablePointer<Atomic<UInt64>> {
        chunks[index >> Self.chunkShift] + (index & (Self.chunkSize - 1))
    }

    @inline(never)
    private mutating func makeChunks(through chunk: Int) {
        while chunk >= chunks.count { append() }
    }

    /// Where the gate of the place at `index` is, for a prefetch; nil when it was never made.
    func address(of index: Int) -> UnsafeRawPointer? {
        index >> Self.chunkShift < chunks.count ? UnsafeRawPointer(word(at: index)) : nil
    }

    private mutating func append() {
        let chunk = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: Self.chunkSize)
        for offset in 0..<Self.chunkSize { (chunk + offset).initialize(to: Atomic(0)) }
        chunks.append(chunk)
        storage.keep(chunk)
    }

    /// Owns the chunks: a table is a value, copied by tests, and its copies share them. (The
    /// table reads its own array of them, not this one: a class's array is an exclusivity
    /// check on every event.)
    private final class Storage {
        private var chunks: [UnsafeMutablePointer<Atomic<UInt64>>] = []

        func keep(_ chunk: UnsafeMutablePointer<Atomic<UInt64>>) { chunks.append(chunk) }

        deinit {
            for chunk in chunks {
                chunk.deinitialize(count: DeliveryGates.chunkSize)
                chunk.deallocate()
            }
        }
    }
}
