import CountdownPrefetch

/// An array that grows a chunk at a time and never moves what it holds.
///
/// A plain array doubles by copying everything into a new buffer and faulting in twice the
/// memory: at a million countdowns, tens of megabytes copied while the table's lock is held,
/// and every tick due meanwhile waits. Here growing allocates one chunk of 16 384 elements.
struct ChunkedArray<Element> {
    private static var chunkShift: Int { 14 }
    private static var chunkSize: Int { 1 << chunkShift }
    private var chunks: [ContiguousArray<Element>] = []
    /// Where each chunk's elements are, for ``prefetch(_:)``.
    private var chunkAddresses: [UInt] = []
    private(set) var count = 0

    var indices: Range<Int> { 0..<count }

    /// Borrowed, not copied: reading one field of an element retains none of the others.
    subscript(index: Int) -> Element {
        _read { yield chunks[index >> Self.chunkShift][index & (Self.chunkSize - 1)] }
        _modify { yield &chunks[index >> Self.chunkShift][index & (Self.chunkSize - 1)] }
    }

    /// Takes the element over: a temporary is moved in, not copied (which retained every
    /// reference it holds, then released the original's).
    /// Calls `body` with the address of the element at `index` (in bounds): for a look at its
    /// bytes that copies and retains nothing. The pointer is valid only inside `body`.
    func withElementPointer<Result>(at index: Int, _ body: (UnsafePointer<Element>) -> Result) -> Result {
        chunks[index >> Self.chunkShift].withUnsafeBufferPointer { chunk in
            body(chunk.baseAddress! + (index & (Self.chunkSize - 1)))
        }
    }

    /// Hints that the element at `index` (in bounds) is read soon: its first and last bytes'
    /// lines are fetched meanwhile. Through the address its chunk was made at, not the chunk
    /// (which a read retains, and whose header may itself be a miss): never dereferenced, and
    /// only stale in a copy, where a hint costs nothing.
    func prefetch(_ index: Int) {
        let element = chunkAddresses[index >> Self.chunkShift]
            &+ UInt(index & (Self.chunkSize - 1)) &* UInt(MemoryLayout<Element>.stride)
        countdown_prefetch(UnsafeRawPointer(bitPattern: element))
        countdown_prefetch(UnsafeRawPointer(bitPattern: element &+ UInt(MemoryLayout<Element>.size - 1)))
    }

    mutating func append(_ element: consuming Element) {
        if count == chunks.count << Self.chunkShift {
            var chunk = ContiguousArray<Element>()
            chunk.reserveCapacity(Self.chunkSize)
            // Appends stay within the capacity reserved: the elements never move.
            chunkAddresses.append(chunk.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) })
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(element)
        count += 1
    }

    mutating func removeAll() {
        chunks = []
        chunkAddresses = []
        count = 0
    }
}
