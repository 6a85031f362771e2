#if Redis
import Countdown

/// Ends what Redis lost. An observer here whose countdown is past its deadline, whose hash is
/// gone (or holds a later countdown) and of whose end no message waits in this member's inbox,
/// lost its countdown with the hash: a start the old master acknowledged and a failover lost, an
/// eviction, a `DEL` by hand. No claim will ever take it, and it would tell nothing more: it
/// hears the finish instead, counted (``LocalWatch/lostCountdowns``). Each shard's claimer runs
/// it after its claims, so within a heartbeat (a second) of ``slack``.
///
/// One script reads the hashes and the inbox together: a claim or cancel deletes a hash and
/// writes its message in one script, so a countdown ended as it should is never taken for lost.
struct ZSetLostCheck: Sendable {
    /// How long past its deadline a countdown's finish may be on its way before Redis is asked.
    static let slack: Int64 = 500_000_000
    /// At most this many countdowns asked about in one script.
    static let batch = 500
    /// At most this many scripts in one check: 5 000 countdowns a heartbeat. One script a
    /// heartbeat ended a failover's 3 519 lost starts over seven seconds (finish p99 4.9 s past
    /// the deadline); the cap keeps a claimer far behind (everything overdue, nothing lost) from
    /// spending its heartbeat asking.
    static let batchesPerCheck = 10

    let prefix: String
    let member: String
    let watch: LocalWatch
    /// Whether a (canonical) key is this shard's.
    let owns: @Sendable (String) -> Bool

    /// Asks about the overdue countdowns of this shard observed here (``batch`` a script,
    /// ``batchesPerCheck`` scripts at most: the rest at the next); ends those Redis lost.
    func run(on link: RedisLink) throws(RedisFailure) {
        let overdue = Array(watch.overdue(by: Self.slack).lazy.filter { owns($0.key) }.prefix(Self.batch * Self.batchesPerCheck))
        for first in stride(from: 0, to: overdue.count, by: Self.batch) {
            let asked = overdue[first..<min(first + Self.batch, overdue.count)]
            let reply = try link.run(Self.script, keys: [prefix], arguments: [member] + asked.flatMap { [$0.key, String($0.generation), $0.token] })
            for index in reply.elements.compactMap(\.int) where (0..<asked.count).contains(Int(index)) {
                let lost = asked[first + Int(index)]
                watch.endLost(generation: lost.generation, token: lost.token)
            }
        }
    }

    /// KEYS: the shard's prefix. ARGV: the member, then key, generation, token of each countdown
    /// asked about. Answers the (0-based) places of those lost: no hash of that generation, and
    /// no message for the token in the member's inbox or the list its reader is working on.
    static let script = RedisScript.reading("lost", source: """
        local P = KEYS[1]
        local waiting = redis.call('LRANGE', P .. ':i:' .. ARGV[1], 0, -1)
        for _, m in ipairs(redis.call('LRANGE', P .. ':w:' .. ARGV[1], 0, -1)) do waiting[#waiting + 1] = m end
        local lost = {}
        for j = 2, #ARGV, 3 do
          if redis.call('HGET', P .. ':c:' .. ARGV[j], 'g') ~= ARGV[j + 1] then
            local token, pending = ' ' .. ARGV[j + 2] .. ' ', false
            for _, m in ipairs(waiting) do
              if string.find(m, token, 1, true) then pending = true break end
            end
            if not pending then lost[#lost + 1] = (j - 2) / 3 end
          end
        end
        return lost
        """)
}
#endif
