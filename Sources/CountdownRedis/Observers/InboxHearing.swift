#if Redis
/// Whether this member hears each shard's inbox, decided as a value. A member learns that
/// another member's call ended one of its observers (an attach, a cancel, a pause) only from
/// its inbox; while the inbox reader cannot read (its connection broke and it is reading what
/// it missed), the member does not know which of its observers still are. From the last answer
/// its reader had (a message pushed since then may be waiting unheard) it ticks them for
/// ``grace``, then holds their ticks until the reader has read everything it missed: a tick it
/// held is a tick lost (as a late thread loses one), never one heard by an observer ended more
/// than the fleet's 100 ms ago (fleet.faults in CI: a reader that met several dropped answers in
/// a row, on a loaded machine, let replaced observers tick 160-200 ms after the call that
/// replaced them). Ticks are held where they are decided and again where they are delivered:
/// a tick decided before the reader knew, delivered after, is held too.
struct InboxHearing {
    /// How long after its reader's last answer a shard's inbox may go unread before its
    /// observers' ticks are held. Once the reader knows it cannot read, any notice pushed since
    /// its last answer may be waiting; a tick that begins within `grace` of that answer begins
    /// within `grace` of any such notice, and so of the call that sent it: inside the 100 ms
    /// bound, with half of it left for the delivery. Later ticks are held. A recovery that reads
    /// again within `grace` of the last answer holds nothing.
    static let grace: Int64 = 50_000_000

    /// Each shard whose inbox is not read now, and since when (monotonic nanoseconds).
    private var deafSince: [Int: Int64] = [:]
    /// The shard a key's messages come through.
    private let shardOf: @Sendable (String) -> Int

    init(shardOf: @escaping @Sendable (String) -> Int = { _ in 0 }) { self.shardOf = shardOf }

    /// The reader of `shard` could not read; its last answer came at `instant` (the first
    /// failure of a series counts).
    mutating func lost(shard: Int, since instant: Int64) {
        if deafSince[shard] == nil { deafSince[shard] = instant }
    }

    /// The reader of `shard` has read everything sent to it before it asked again.
    mutating func regained(shard: Int) { deafSince[shard] = nil }

    /// Whether a tick of `key` decided at `now` is held.
    func holds(_ key: String, now: Int64) -> Bool {
        guard !deafSince.isEmpty, let since = deafSince[shardOf(key)] else { return false }
        return now - since > Self.grace
    }

    /// Whether any shard's inbox is not read now.
    var isDeaf: Bool { !deafSince.isEmpty }

    /// What a reader tells of its inbox.
    enum Change: Sendable {
        /// It could not read; its last answer came at `since` (monotonic nanoseconds).
        case lost(since: Int64)
        /// It has read everything sent to it before it asked again.
        case regained
    }

    mutating func apply(_ change: Change, shard: Int) {
        switch change {
        case .lost(let since): lost(shard: shard, since: since)
        case .regained: regained(shard: shard)
        }
    }
}
#endif
