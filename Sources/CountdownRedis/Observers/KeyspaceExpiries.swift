#if Redis
/// What the keyspace strategy's expiry notifications need of the observer registry: an
/// `expired` notification names a key, never which countdown under it ended, and comes on the
/// subscriber's connection, in no order with the answers on the callers'. A value, decided
/// with the registry under its lock.
///
/// - The countdowns of one key are one after another at the server (a key holds one at a
///   time), so its expiries end them in order: a notification ends the oldest observed here
///   that can have ended by then (``candidates(_:current:)``), never the newest alone (read
///   late, the first expiry finished the second countdown, and the first never ended).
/// - A notification that ended nothing here, heard while a call naming its key is on its way,
///   is kept for that call's answer (``keep(_:bound:)``): under load the answer of a start was
///   read after its own countdown's expiry, which is sent once, and the observer never ended.
struct KeyspaceExpiries {
    /// How many calls on their way name each key.
    private var awaited: [String: Int] = [:]
    /// An expiry kept per key, with the latest deadline it can end. Goes when no call naming
    /// the key is on its way, or when an answer used it.
    private var kept: [String: Int64] = [:]
    /// Generations observed here under a key, older than the newest, that have not ended here
    /// (ascending): they wait for their own expiry.
    private var older: [String: [Int64]] = [:]

    mutating func expect(_ key: String) { awaited[key, default: 0] += 1 }

    /// A call naming `key` is answered or failed.
    mutating func settle(_ key: String) {
        guard let calls = awaited[key] else { return }
        awaited[key] = calls > 1 ? calls - 1 : nil
        if calls == 1 { kept[key] = nil }
    }

    /// An expiry of `key` that ended nothing here: kept while a call naming it is on its way.
    mutating func keep(_ key: String, bound: Int64) {
        guard awaited[key] != nil else { return }
        kept[key] = max(kept[key] ?? .min, bound)
    }

    func kept(_ key: String) -> Int64? { kept[key] }
    mutating func used(_ key: String) { kept[key] = nil }

    /// `generation` is observed here under `key` beside a newer one.
    mutating func outlived(_ key: String, _ generation: Int64) {
        var list = older[key] ?? []
        guard !list.contains(generation) else { return }
        list.append(generation)
        list.sort()
        older[key] = list
    }

    /// `generation` ended here.
    mutating func ended(_ key: String, _ generation: Int64) {
        guard var list = older[key], let index = list.firstIndex(of: generation) else { return }
        list.remove(at: index)
        older[key] = list.isEmpty ? nil : list
    }

    /// The generations observed here under `key`, oldest first.
    func candidates(_ key: String, current: Int64?) -> [Int64] {
        (older[key] ?? []) + (current.map { [$0] } ?? [])
    }
}
#endif
