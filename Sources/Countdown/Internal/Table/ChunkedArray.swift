import CountdownPrefetch
#if canImport(Glibc)
import Glibc
#endif

/// An array that grows a chunk at a time and never moves what it holds.
///
/// A plain array doubles by copying everything into a new buffer and faulting in twice the
/// memory: at a million countdowns, tens of megabytes copied while the table's lock is held,
/// and every tick due meanwhile waits. Here growing allocates one chunk of 16 384 elements.
struct ChunkedArray<Element> {
    private static var chunkShift: Int { 14 }
    static var chunkSize: Int { 1 << chunkShift }
    private var chunks: [ContiguousArray<Element>] = []
    /// Where each chunk's elements are, for ``prefetch(_:)``.
    private var chunkAddresses: [UInt] = []
    private(set) var count = 0
    /// A chunk made ahead of need, for the next append that begins a chunk.
    private var spare: Chunk?
    /// A chunk was asked for and has not been provided yet.
    private var spareAsked = false

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

    /// Appends `element`. Returns true when a chunk should be made ahead of need: the caller
    /// makes one (``makeChunk()``), has it faulted in off its path (``Chunk/faultIn()``) and
    /// hands it over (``provide(_:)``).
    ///
    /// From the second chunk on, a chunk is asked for as each chunk begins: an array that grew
    /// past one chunk is growing. A small array never asks (a chunk faulted in ahead would be
    /// resident for nothing).
    @discardableResult
    mutating func append(_ element: consuming Element) -> Bool {
        var asks = false
        if count == chunks.count << Self.chunkShift {
            let chunk = spare.take() ?? Self.makeChunk()
            // Appends stay within the capacity reserved: the elements never move.
            chunkAddresses.append(chunk.address)
            chunks.append(chunk.elements)
            if chunks.count >= 2 && !spareAsked {
                spareAsked = true
                asks = true
            }
        }
        chunks[chunks.count - 1].append(element)
        count += 1
        return asks
    }

    /// Storage for one chunk, made ahead of need: empty, its capacity reserved.
    struct Chunk {
        fileprivate var elements: ContiguousArray<Element>

        /// Where its elements go.
        var address: UInt { elements.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } }

        /// Faults in its memory, writable (Linux with glibc; elsewhere nothing): the kernel maps
        /// every page in one call, which costs less than a fault per page, and on the calling
        /// thread, not on the appends' (`MADV_POPULATE_WRITE`, Linux 5.14: on an older kernel the
        /// pages fault in when first written, as they would have).
        func faultIn() {
            #if canImport(Glibc)
            let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
            let first = (address + page - 1) & ~(page - 1)
            let end = (address + UInt(ChunkedArray.chunkSize * MemoryLayout<Element>.stride)) & ~(page - 1)
            guard end > first, let start = UnsafeMutableRawPointer(bitPattern: first) else { return }
            let populateWrite: Int32 = 23  // not in every libc's headers
            _ = madvise(start, Int(end - first), populateWrite)
            #endif
        }
    }

    /// Whether a chunk made ahead waits for the next append that begins a chunk.
    var holdsSpare: Bool { spare != nil }

    /// A chunk for ``provide(_:)``: allocated by the calling thread, from its heap, as the
    /// chunks an append makes are (a thread of the pool allocating it kept the memory in that
    /// thread's arena, resident after the array was gone); ``Chunk/faultIn()`` may run anywhere.
    static func makeChunk() -> Chunk {
        var elements = ContiguousArray<Element>()
        elements.reserveCapacity(chunkSize)
        return Chunk(elements: elements)
    }

    /// Takes a chunk asked for by ``append(_:)``. Returns it when none is wanted any more (the
    /// array was emptied meanwhile), for the caller to let go of outside any lock. The caller
    /// keeps no copy: a chunk held twice is copied by its first append, into a buffer that
    /// grows and moves.
    mutating func provide(_ chunk: consuming Chunk) -> Chunk? {
        guard spareAsked, spare == nil else { return chunk }
        spareAsked = false
        spare = chunk
        return nil
    }

    mutating func removeAll() {
        chunks = []
        chunkAddresses = []
        spare = nil
        spareAsked = false
        count = 0
    }
}

extension ChunkedArray.Chunk: Sendable where Element: Sendable {}
