import CountdownSupport
import Countdown

/// The least a keyed `start` and `cancel` do (find the key, store or drop an entry), done by
/// Swift's own hash table on this machine: the churn probe's keys, in its order, put into and
/// taken out of a `Dictionary` reserved for them, each insert allocating an entry as a `start`
/// allocates its observer's. Measured in the same minute as the scheduler's calls, as the
/// floor thread measures a wake-up beside the scheduler's: at a million keys both pay a cache
/// miss to find a key, which the scheduler's figure alone does not tell apart from its own work.
struct KeyedFloorProbe {
    let keys: ArraySlice<String>
    /// Keys put in before the calls are timed: as many as the scheduler held.
    let filled: Int
    let samples: Int

    /// What one key holds: the callback and the instant it is due, as a countdown holds (the
    /// instant is any: the entry is there for its size and its allocation).
    private final class Entry {
        let observer: CountdownObserver
        let due: UInt64

        init(observer: @escaping CountdownObserver, due: UInt64) {
            self.observer = observer
            self.due = due
        }
    }

    func run() -> (insert: LatencyHistogram, remove: LatencyHistogram) {
        let observer: CountdownObserver = { _ in }
        let due = SystemClocks.monotonic()
        var entries: [String: Entry] = [:]
        entries.reserveCapacity(filled)
        for key in keys.prefix(filled) { entries[key] = Entry(observer: observer, due: due) }
        return ChurnProbe.timePairs(
            of: keys, filled: filled, samples: samples, what: "the keyed floor",
            remove: { entries.removeValue(forKey: $0) },
            insert: { entries[$0] = Entry(observer: observer, due: due) })
    }
}
