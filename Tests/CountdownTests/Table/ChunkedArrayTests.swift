import Testing

@testable import Countdown

/// The slab's growth, as a value: when a chunk is asked for ahead of need, and what becomes of
/// the chunk provided. No thread makes the chunk here; the test does, as the driver would.
@Suite("ChunkedArray")
struct ChunkedArrayTests {
    typealias Array = ChunkedArray<Int>
    static let chunk = Array.chunkSize

    /// Appends `count` elements numbered from the array's count; returns how many asked.
    static func append(_ count: Int, to array: inout Array) -> Int {
        var asks = 0
        for _ in 0..<count where array.append(array.count) { asks += 1 }
        return asks
    }

    @Test("an array that stays within one chunk never asks for another")
    func smallNeverAsks() {
        var array = Array()
        #expect(Self.append(Self.chunk, to: &array) == 0)
        #expect(array.count == Self.chunk)
    }

    @Test("a growing array asks once as its second chunk begins, and again only once the chunk came and was used")
    func growingAsksAheadAndUsesWhatCame() {
        var array = Array()
        _ = Self.append(Self.chunk, to: &array)
        let asked = array.append(array.count)
        #expect(asked, "the second chunk begins: the third is asked for")
        // Not provided yet: the third chunk begins without it, and no second request is made.
        #expect(Self.append(2 * Self.chunk - 1, to: &array) == 0)
        let provided = Array.makeChunk()
        provided.faultIn()
        let address = provided.address
        // Consumed: a copy held here would make the first append copy the chunk.
        let takenBack = array.provide(consume provided)
        #expect(takenBack == nil, "the chunk asked for is taken")
        let askedAgain = array.append(array.count)
        #expect(askedAgain, "the fourth chunk begins with the chunk provided, and asks for the next")
        // The first element of the fourth chunk sits at the start of the chunk provided.
        #expect(array.withElementPointer(at: array.count - 1) { UInt(bitPattern: $0) } == address)
        #expect(Self.append(Self.chunk - 1, to: &array) == 0)
        for index in array.indices { #expect(array[index] == index) }
    }

    @Test("a chunk nobody asked for, or asked for before an emptying, is handed back")
    func unwantedChunkIsHandedBack() {
        var array = Array()
        let unasked = array.provide(Array.makeChunk())
        #expect(unasked != nil, "an empty array asked for nothing")
        _ = Self.append(Self.chunk + 1, to: &array)
        array.removeAll()
        let afterEmptying = array.provide(Array.makeChunk())
        #expect(afterEmptying != nil, "the request went with the emptying")
        #expect(Self.append(Self.chunk, to: &array) == 0)
        let grownAgain = array.append(array.count)
        #expect(grownAgain, "grown again: asked again")
        let wanted = array.provide(Array.makeChunk())
        #expect(wanted == nil)
        let second = array.provide(Array.makeChunk())
        #expect(second != nil, "one chunk ahead, not two")
    }
}

