/// An array that grows a chunk at a time and never moves what it holds.
///
/// A plain array doubles by copying everything into a new buffer and faulting in twice the
/// memory: at a million countdowns, tens of megabytes copied while the table's lock is held,
/// and every tick due meanwhile waits. Here growing allocates one chunk of 16 384 elements.
struct ChunkedArray<Element> {
    private static var chunkShift: Int { 14 }
    private static var chunkSize: Int { 1 << chunkShift }
    private var chunks: [ContiguousArray<Element>] = []
    private(set) var count = 0

    var indices: Range<Int> { 0..<count }

    /// Borrowed, not copied: reading one field of an element retains none of the others.
    subscript(index: Int) -> Element {
        _read { yield chunks[index >> Self.chunkShift][index & (Self.chunkSize - 1)] }
        _modify { yield &chunks[index >> Self.chunkShift][index & (Self.chunkSize - 1)] }
    }

    /// Takes the element over: a temporary is moved in, not copied (which retained every
    /// reference it holds, then released the original's).
    mutating func append(_ element: consuming Element) {
        if count == chunks.count << Self.chunkShift {
            var chunk = ContiguousArray<Element>()
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(element)
        count += 1
    }

    mutating func removeAll() {
        chunks = []
        count = 0
    }
}
