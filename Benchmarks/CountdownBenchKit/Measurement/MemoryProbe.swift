import CountdownSupport

/// The machine's memory as a table of a million countdowns meets it: the time of one dependent
/// load, each address read from the line before (a pointer chase), through a random cycle of
/// 64-byte lines. A working set that fits a last-level cache and one that does not.
///
/// A neighbour on the same host that thrashes the shared cache or the memory bus shows here and
/// nowhere else: it takes no steal time, and the floor thread's wake-ups barely touch memory.
/// A cold keyed start or cancel at a million keys is a few such loads, so its figures move with
/// this one.
enum MemoryProbe {
    static let lineBytes = 64
    static let smallSetBytes = 4 << 20
    static let largeSetBytes = 64 << 20

    /// Both working sets, measured one after the other.
    static func measure() -> (small: Double, large: Double) {
        (nanosecondsPerLoad(bytes: smallSetBytes, loads: 1_000_000), nanosecondsPerLoad(bytes: largeSetBytes, loads: 500_000))
    }

    /// One cycle through every line in random order (Sattolo's shuffle): `next[i]` is the line
    /// read after line `i`, and following it from any line visits every line once before it
    /// comes back. Random, so that no prefetcher guesses the next address.
    static func cycle<Random: RandomNumberGenerator>(lines: Int, using random: inout Random) -> [Int] {
        var next = Array(0..<lines)
        var i = lines - 1
        while i > 0 {
            next.swapAt(i, Int.random(in: 0..<i, using: &random))
            i -= 1
        }
        return next
    }

    /// ns per load, over `loads` dependent loads after one lap to warm the caches.
    static func nanosecondsPerLoad(bytes: Int, loads: Int) -> Double {
        let lines = max(2, bytes / lineBytes)
        let wordsPerLine = lineBytes / MemoryLayout<Int>.stride
        var random = SystemRandomNumberGenerator()
        let next = cycle(lines: lines, using: &random)
        // Each line holds the index of the word that starts the next line; the rest of the line
        // is padding, so that every load touches a line of its own.
        var chain = [Int](repeating: 0, count: lines * wordsPerLine)
        for line in 0..<lines { chain[line * wordsPerLine] = next[line] * wordsPerLine }
        return chain.withUnsafeBufferPointer { words in
            var at = 0
            for _ in 0..<lines { at = words[at] }
            let started = SystemClocks.monotonic()
            for _ in 0..<loads { at = words[at] }
            let elapsed = SystemClocks.monotonic() - started
            // Where the chase ended is used, so that it cannot be optimised away.
            return at < 0 ? .nan : Double(elapsed) / Double(loads)
        }
    }
}
