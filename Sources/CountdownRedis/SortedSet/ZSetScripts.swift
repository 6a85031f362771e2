#if Redis
/// The sorted-set strategy's operations, each one Lua script: atomic on the server, one round
/// trip, timed by the server's own clock (`TIME`), which decides for the whole fleet, and
/// recorded (``CallRecord``), so that a call sent again is answered the same.
///
/// Lean on purpose: Redis runs one script at a time, so every command and every Lua closure in
/// a start is paid by every member's starts (measured with `INFO commandstats`: a shared prelude
/// of six helper functions cost most of a 19.1 µs start). What is shared is written into each
/// script where it is used (``tell(_:_:)``), not defined as a function.
///
/// Under the namespace `P` (`KEYS[1]`, a hash tag such as `{countdown}` so that a cluster keeps
/// it on one slot):
/// - `P:d`: a sorted set, key → deadline in µs of the server's clock: the running countdowns;
/// - `P:c:<key>`: a hash per countdown: `g` its generation (fleet-wide serial), `d` its duration
///   (µs), `s` `r` running or `p` paused, `dl` its deadline or `r` its frozen remaining time, `o`
///   its observer's token (`<member>/<serial>`: the last attached anywhere), `a` how many
///   attached since the start, `k` how many times it was paused or resumed (its change number);
/// - `P:p`: the set of paused keys (the running ones are `P:d`'s members);
/// - `P:seq`: the generation counter;
/// - `P:m`: the members (schedulers) seen, by the server's time of their last claim (one a
///   second at least): those seen in the last 10 s are woken; those unseen for ten minutes
///   are forgotten, and their call records and inboxes deleted;
/// - `P:i:<member>`: a member's inbox, a list of what happened to a countdown whose observer it
///   holds, each addressed to that observer's token: `f g token key` (finished, claimed
///   elsewhere), `x g token key` (cancelled), `l g token key` (another observer attached),
///   `p g k remaining token key` (paused), `r g k deadline token key` (resumed); and `w deadline`
///   wake-ups. Read into `P:w:<member>` (``InboxReader``); both kept a minute while nobody reads;
/// - `P:a:<member>:<role>`: the call records (``CallRecord``).
///
/// Numbers in messages are written with `string.format('%d')`: Lua's own conversion of a number
/// to text keeps 14 digits, and a deadline in µs has 16. Nor is a number passed to `redis.call`
/// (see ``CallRecord``): it would be formatted with `%.17g`, at some thousands of instructions.
enum ZSetScripts {
    /// A read that runs before any write (`TIME`, a start's first `HGET`, its capacity count)
    /// is not checked: Redis refuses it before anything was written.
    private typealias K = ZSetKeys

    /// Lua that posts `message` to the inbox of the member of `owner` (a token), unless that is
    /// this member.
    static func tell(_ owner: String, _ message: String) -> String {
        """
        do
          local member = string.match(\(owner), '^[^/]*')
          if member ~= me then
            local box = P .. ':i:' .. member
            redis.call('RPUSH', box, \(message))
            redis.call('PEXPIRE', box, '60000')
          end
        end
        """
    }

    /// Lua that wakes every other member when `deadline` (a number; `text`, the same as text) is
    /// earlier than every deadline before it: their claimers sleep until the earliest they know.
    /// Not when it is further away than two heartbeats: every member claims at least once a
    /// heartbeat, and each claim answers the earliest deadline left, so each learns of it in
    /// time (most countdowns; it saves a start the look at the sorted set, and the messages).
    static func wakeIfEarliest(_ deadline: String, _ text: String) -> String {
        """
        if \(deadline) < n + \(2 * ZSetClaimer.heartbeat.nanoseconds / 1000) then
          local first = redis.call('ZRANGE', P .. ':d', '0', '0', 'WITHSCORES')
          if first[2] == nil or tonumber(first[2]) > \(deadline) then
            local wake = 'w ' .. \(text)
            for _, member in ipairs(redis.call('ZRANGEBYSCORE', P .. ':m', string.format('%d', n - 10000000), '+inf')) do
              if member ~= me then
                local box = P .. ':i:' .. member
                redis.call('RPUSH', box, wake)
                redis.call('PEXPIRE', box, '60000')
              end
            end
          end
        end
        """
    }

    /// Starts (or attaches to) one countdown or many, in order, atomically as a whole: a key
    /// named twice is started, then attached. What the starts of one call share is done once:
    /// the clock, the call record, the capacity count, the generation counter, the wake-up of
    /// the fleet, one `ZADD` for all; a start of its own pays them all (callgrind on
    /// redis-server: see ``ZSetEngine/startsPerScript``).
    ///
    /// A countdown half-written (by a version before the permission checks, a hand edit, an
    /// error no check foresaw) is put right by the next start or attach of its key: a running
    /// one missing from `P:d`, which no claim would ever take, goes back in at its deadline
    /// (due at once if that passed, so that it finishes: an attach answered 0 left for ever
    /// was the defect), without a deadline it is due now; a paused one missing from `P:p`, which
    /// the capacity did not count, goes back in. One `ZSCORE` per attach pays for it.
    ///
    /// A countdown's hash is written lean: `g`, `d`, `dl`, `o` only; `s`, `a` and `k` are
    /// written when they stop being "running", 0 and 0. A key is looked up with `HGET` of its
    /// generation, and read whole only when it exists.
    ///
    /// arg: capacity (-1: none), the number of shards S, this one's index i (the generation is
    /// `seq · S + i`, unique fleet-wide though each shard counts its own), attach only (1/0);
    /// then from `ARGV[8]` (after the call id) a triple per start: owner token, key, duration µs.
    /// Answers, after now, per start: `0 generation deadline` (started), `1 generation duration
    /// 'r'/'p' deadline remaining attach-serial change` (attached: the serial orders the
    /// observers of one countdown as the server saw them attach, the starter's 0), `2` (over
    /// capacity) or `3` (nothing to attach) (``StartAnswer/sequence(_:requested:)``).
    /// The scripts the callers' pipes run, loaded when each pipe is made.
    static var callers: [RedisScript] { [start, cancel, pause, resume, remaining] }

    static let start = RedisScript.recorded("start", uses: [
        .init("HMGET", K.hash), .init("SISMEMBER", K.paused), .init("ZSCORE", K.deadlines), .init("HSET", K.hash),
        .init("SADD", K.paused), .init("RPUSH", K.inbox), .init("PEXPIRE", K.inbox), .init("INCRBY", K.serial),
        .init("ZRANGE", K.deadlines), .init("ZRANGEBYSCORE", K.members), .init("ZADD", K.deadlines),
    ], body: """
        local capacity = tonumber(arg[1])
        local shards, shard = tonumber(arg[2]), tonumber(arg[3])
        local attachOnly = arg[4] == '1'
        local starts = (#ARGV - 7) / 3
        local count = 0
        if capacity >= 0 and not attachOnly then count = redis.call('ZCARD', P .. ':d') + redis.call('SCARD', P .. ':p') end
        local base
        local out, adds = {}, {}
        local earliest, EARLIEST
        for j = 8, #ARGV - 2, 3 do
          local owner, key = ARGV[j], ARGV[j + 1]
          local h = P .. ':c:' .. key
          local o = #out
          if redis.call('HGET', h, 'g') then
            local v = redis.call('HMGET', h, 'g', 'd', 's', 'dl', 'r', 'o', 'a', 'k')
            if v[3] == 'p' then
              if redis.call('SISMEMBER', P .. ':p', key) == 0 then redis.call('SADD', P .. ':p', key) end
            elseif not redis.call('ZSCORE', P .. ':d', key) then
              local deadline = tonumber(v[4] or N)
              if not v[4] then redis.call('HSET', h, 'dl', N) v[4] = N end
              adds[#adds + 1], adds[#adds + 2] = v[4], key
              if earliest == nil or deadline < earliest then earliest, EARLIEST = deadline, v[4] end
            end
            local a = (tonumber(v[7]) or 0) + 1
            redis.call('HSET', h, 'o', owner, 'a', string.format('%d', a))
          \(tell("v[6]", "'l ' .. v[1] .. ' ' .. v[6] .. ' ' .. key"))
            local left
            if v[3] == 'p' then left = tonumber(v[5]) else left = math.max(0, tonumber(v[4]) - n) end
            out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 1, v[1], v[2], v[3] or 'r'
            out[o + 5], out[o + 6], out[o + 7], out[o + 8] = v[4] or 0, left, a, v[8] or 0
          elseif attachOnly then
            out[o + 1] = 3
          elseif capacity >= 0 and count >= capacity then
            out[o + 1] = 2
          else
            if not base then base = redis.call('INCRBY', P .. ':seq', string.format('%d', starts)) - starts end
            count = count + 1
            local g = (base + (j - 5) / 3) * shards + shard
            local deadline = n + tonumber(ARGV[j + 2])
            local DL = string.format('%d', deadline)
            redis.call('HSET', h, 'g', string.format('%d', g), 'd', ARGV[j + 2], 'dl', DL, 'o', owner)
            adds[#adds + 1], adds[#adds + 2] = DL, key
            if earliest == nil or deadline < earliest then earliest, EARLIEST = deadline, DL end
            out[o + 1], out[o + 2], out[o + 3] = 0, g, deadline
          end
        end
        if earliest then
        \(wakeIfEarliest("earliest", "EARLIEST"))
          redis.call('ZADD', P .. ':d', unpack(adds))
        end
        return {unpack(out)}
        """)

    /// arg: keys, one or more (cancels waiting together go as one script: ``ZSetEngine``).
    /// Answers {now, then per key `1 generation owner` or `0`}: one key's is {now, 1, generation,
    /// owner} or {now, 0}.
    static let cancel = RedisScript.recorded("cancel", uses: [
        .init("DEL", K.hash), .init("ZREM", K.deadlines), .init("SREM", K.paused), .init("RPUSH", K.inbox),
        .init("PEXPIRE", K.inbox),
    ], body: """
        local out = {}
        for j = 4, #ARGV do
          local key = ARGV[j]
          local h = P .. ':c:' .. key
          local v = redis.call('HMGET', h, 'g', 'o')
          if not v[1] then
            out[#out + 1] = 0
          else
            redis.call('DEL', h)
            redis.call('ZREM', P .. ':d', key)
            redis.call('SREM', P .. ':p', key)
          \(tell("v[2]", "'x ' .. v[1] .. ' ' .. v[2] .. ' ' .. key"))
            out[#out + 1], out[#out + 2], out[#out + 3] = 1, v[1], v[2]
          end
        end
        return {unpack(out)}
        """)

    /// arg: key. Answers {now, 1, generation, remaining µs, owner, change} or {now, 0}: unknown,
    /// or paused already. A countdown past its deadline that no claim has taken yet is paused
    /// with nothing left, as cancel cancels it and remaining reads it: one countdown to every
    /// call until a claim takes it (a pause that answered "not running" for it, while a cancel
    /// then answered true, told a caller two stories about one countdown). Its resume makes it
    /// due at once.
    static let pause = RedisScript.recorded("pause", uses: [
        .init("HSET", K.hash), .init("HDEL", K.hash), .init("ZREM", K.deadlines), .init("SADD", K.paused),
        .init("RPUSH", K.inbox), .init("PEXPIRE", K.inbox),
    ], body: """
        local key = arg[1]
        local h = P .. ':c:' .. key
        local v = redis.call('HMGET', h, 'g', 's', 'dl', 'o', 'k')
        if not v[1] or v[2] == 'p' then return {0} end
        local left = math.max(tonumber(v[3]) - n, 0)
        local LEFT = string.format('%d', left)
        local K = string.format('%d', (tonumber(v[5]) or 0) + 1)
        redis.call('HSET', h, 's', 'p', 'r', LEFT, 'k', K)
        redis.call('HDEL', h, 'dl')
        redis.call('ZREM', P .. ':d', key)
        redis.call('SADD', P .. ':p', key)
        \(tell("v[4]", "'p ' .. v[1] .. ' ' .. K .. ' ' .. LEFT .. ' ' .. v[4] .. ' ' .. key"))
        return {1, v[1], left, v[4], K}
        """)

    /// arg: key. Answers {now, 1, generation, deadline, owner, change} or {now, 0}.
    static let resume = RedisScript.recorded("resume", uses: [
        .init("ZRANGE", K.deadlines), .init("ZRANGEBYSCORE", K.members), .init("HSET", K.hash), .init("HDEL", K.hash),
        .init("SREM", K.paused), .init("ZADD", K.deadlines), .init("RPUSH", K.inbox), .init("PEXPIRE", K.inbox),
    ], body: """
        local key = arg[1]
        local h = P .. ':c:' .. key
        local v = redis.call('HMGET', h, 'g', 's', 'r', 'o', 'k')
        if not v[1] or v[2] ~= 'p' then return {0} end
        local deadline = n + tonumber(v[3])
        local DL = string.format('%d', deadline)
        local K = string.format('%d', (tonumber(v[5]) or 0) + 1)
        \(wakeIfEarliest("deadline", "DL"))
        redis.call('HSET', h, 's', 'r', 'dl', DL, 'k', K)
        redis.call('HDEL', h, 'r')
        redis.call('SREM', P .. ':p', key)
        redis.call('ZADD', P .. ':d', DL, key)
        \(tell("v[4]", "'r ' .. v[1] .. ' ' .. K .. ' ' .. DL .. ' ' .. v[4] .. ' ' .. key"))
        return {1, v[1], deadline, v[4], K}
        """)

    /// ARGV: key. Answers {1, remaining µs} or {0}. Reads only.
    static let remaining = RedisScript.reading("remaining", source: """
        local v = redis.call('HMGET', KEYS[1] .. ':c:' .. ARGV[1], 'g', 's', 'dl', 'r')
        if not v[1] then return {0} end
        if v[2] == 'p' then return {1, tonumber(v[4])} end
        local t = redis.call('TIME')
        return {1, math.max(0, tonumber(v[3]) - (tonumber(t[1]) * 1000000 + tonumber(t[2])))}
        """)

    /// arg: most to claim. Marks the member seen, forgets members unseen for ten minutes (with
    /// their call records and inboxes), then claims what is due: each claimed countdown leaves every structure at once (so one member owns
    /// each finish), and its finish goes to its observer's inbox unless that is here. Recorded
    /// like every call: a claim whose answer was lost, sent again with its serial, answers the
    /// same countdowns, so the claimer's own observers still hear them.
    /// Answers {now, earliest deadline left or -1, claimed count, {generation, owner, …} observed here}.
    static let claim = RedisScript.recorded("claim", uses: [
        .init("ZADD", K.members), .init("ZRANGEBYSCORE", K.members), .init("DEL", K.records), .init("ZREM", K.members),
        .init("ZRANGEBYSCORE", K.deadlines), .init("ZREM", K.deadlines), .init("HMGET", K.hash), .init("DEL", K.hash),
        .init("RPUSH", K.inbox), .init("PEXPIRE", K.inbox), .init("ZRANGE", K.deadlines),
    ], body: """
        redis.call('ZADD', P .. ':m', N, me)
        for _, gone in ipairs(redis.call('ZRANGEBYSCORE', P .. ':m', '-inf', string.format('%d', n - 600000000), 'LIMIT', '0', '16')) do
          redis.call('DEL', P .. ':a:' .. gone .. ':calls', P .. ':a:' .. gone .. ':claimer', P .. ':i:' .. gone, P .. ':w:' .. gone)
          redis.call('ZREM', P .. ':m', gone)
        end
        local due = redis.call('ZRANGEBYSCORE', P .. ':d', '-inf', N, 'LIMIT', '0', arg[1])
        local here = {}
        if #due > 0 then
          redis.call('ZREM', P .. ':d', unpack(due))
          for _, key in ipairs(due) do
            local h = P .. ':c:' .. key
            local v = redis.call('HMGET', h, 'g', 'o')
            redis.call('DEL', h)
            if v[1] then
              if string.match(v[2], '^[^/]*') == me then
                here[#here + 1] = v[1]
                here[#here + 1] = v[2]
              else
              \(tell("v[2]", "'f ' .. v[1] .. ' ' .. v[2] .. ' ' .. key"))
              end
            end
          end
        end
        local first = redis.call('ZRANGE', P .. ':d', '0', '0', 'WITHSCORES')
        return {first[2] or '-1', #due, here}
        """)

    /// Moves up to `ARGV[1]` more messages from the inbox `KEYS[1]` to the processing list
    /// `KEYS[2]` (after the one a blocking `BLMOVE` moved): one round trip for a burst. Answers
    /// the messages moved. Never sent twice (a resend would move the next ones and lose the
    /// answer of the first): after a broken connection the reader reads the processing list
    /// again instead.
    static let moveInbox = RedisScript.writing("move-inbox", uses: [
        .init("PEXPIRE", "KEYS[2]"), .init("LPOP", "KEYS[1]"), .init("RPUSH", "KEYS[2]"),
    ], source: """
        redis.call('PEXPIRE', KEYS[2], 60000)
        local items = redis.call('LPOP', KEYS[1], tonumber(ARGV[1]))
        if not items then return {} end
        redis.call('RPUSH', KEYS[2], unpack(items))
        return items
        """)
}
#endif
