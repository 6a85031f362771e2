#if Redis
/// The sorted-set strategy's operations, each one Lua script: atomic on the server, one round
/// trip, and timed by the server's own clock (`TIME`), which decides for the whole fleet.
///
/// Under the namespace `P` (`KEYS[1]`, a hash tag such as `{countdown}` so that a cluster keeps
/// it on one slot):
/// - `P:d`: a sorted set, key → deadline in µs of the server's clock: the running countdowns;
/// - `P:c:<key>`: a hash per countdown: `g` its generation (fleet-wide serial), `d` its duration
///   (µs), `s` `r` running or `p` paused, `dl` its deadline or `r` its frozen remaining time, `o`
///   its observer (`<member>/<serial>`: the last attached anywhere), `a` how many attached since
///   the start;
/// - `P:k`: the set of keys running or paused;
/// - `P:seq`: the generation counter;
/// - `P:m`: the members (schedulers) seen, by the server's time of their last claim;
/// - `P:i:<member>`: a member's inbox, a list: what another member did to a countdown it observes
///   (`f g owner key` finish, `x` cancel, `l g attach-serial key` observer lost, `p` pause, `r` resume) and `w`
///   wake-ups, kept
///   for a minute when nobody reads it.
enum ZSetScripts {
    private static let prelude = """
        local P = KEYS[1]
        local function now()
          local t = redis.call('TIME')
          return tonumber(t[1]) * 1000000 + tonumber(t[2])
        end
        local function post(member, message)
          local box = P .. ':i:' .. member
          redis.call('RPUSH', box, message)
          redis.call('PEXPIRE', box, 60000)
        end
        local function tell(owner, me, message)
          local member = string.match(owner, '^[^/]*')
          if member ~= me then post(member, message) end
        end
        local function wakeIfEarliest(deadline, me)
          local first = redis.call('ZRANGE', P .. ':d', 0, 0, 'WITHSCORES')
          if first[2] == nil or tonumber(first[2]) > deadline then
            for _, member in ipairs(redis.call('ZRANGE', P .. ':m', 0, -1)) do
              if member ~= me then post(member, 'w ' .. deadline) end
            end
          end
        end
        local function remainingOf(f, n)
          if f.s == 'p' then return tonumber(f.r) end
          local left = tonumber(f.dl) - n
          if left < 0 then return 0 end
          return left
        end
        local function load(h)
          local v = redis.call('HMGET', h, 'g', 'd', 's', 'dl', 'r', 'o')
          if not v[1] then return nil end
          return { g = v[1], d = v[2], s = v[3], dl = v[4], r = v[5], o = v[6] }
        end

        """

    /// ARGV: me, owner, key, duration µs, capacity (-1: none), attach only (1/0).
    /// Returns {0 started | 1 attached | 2 over capacity | 3 nothing to attach, generation,
    /// duration, 'r'/'p', deadline, remaining, now, attach serial}: the serial orders the
    /// observers of one countdown as the server saw them attach (0 for the starter's).
    static let start = RedisScript(name: "start", source: prelude + """
        local me, owner, key = ARGV[1], ARGV[2], ARGV[3]
        local h = P .. ':c:' .. key
        local n = now()
        local f = load(h)
        if f then
          local a = redis.call('HINCRBY', h, 'a', 1)
          redis.call('HSET', h, 'o', owner)
          tell(f.o, me, 'l ' .. f.g .. ' ' .. a .. ' ' .. key)
          return {1, f.g, f.d, f.s, f.dl or 0, remainingOf(f, n), n, a}
        end
        if ARGV[6] == '1' then return {3} end
        local capacity = tonumber(ARGV[5])
        if capacity >= 0 and redis.call('SCARD', P .. ':k') >= capacity then return {2} end
        local d = tonumber(ARGV[4])
        local g = redis.call('INCR', P .. ':seq')
        local deadline = n + d
        wakeIfEarliest(deadline, me)
        redis.call('HSET', h, 'g', g, 'd', d, 's', 'r', 'dl', deadline, 'o', owner, 'a', 0)
        redis.call('ZADD', P .. ':d', deadline, key)
        redis.call('SADD', P .. ':k', key)
        return {0, g, d, 'r', deadline, d, n, 0}
        """)

    /// ARGV: me, key. Returns {1, generation, owner} or {0}.
    static let cancel = RedisScript(name: "cancel", source: prelude + """
        local me, key = ARGV[1], ARGV[2]
        local h = P .. ':c:' .. key
        local v = redis.call('HMGET', h, 'g', 'o')
        if not v[1] then return {0} end
        redis.call('DEL', h)
        redis.call('ZREM', P .. ':d', key)
        redis.call('SREM', P .. ':k', key)
        tell(v[2], me, 'x ' .. v[1] .. ' ' .. key)
        return {1, v[1], v[2]}
        """)

    /// ARGV: me, key. Returns {1, generation, remaining µs, owner} or {0}: unknown, paused
    /// already, or due (its finish is on its way).
    static let pause = RedisScript(name: "pause", source: prelude + """
        local me, key = ARGV[1], ARGV[2]
        local h = P .. ':c:' .. key
        local f = load(h)
        if not f or f.s ~= 'r' then return {0} end
        local left = tonumber(f.dl) - now()
        if left <= 0 then return {0} end
        redis.call('HSET', h, 's', 'p', 'r', left)
        redis.call('HDEL', h, 'dl')
        redis.call('ZREM', P .. ':d', key)
        tell(f.o, me, 'p ' .. f.g .. ' ' .. left .. ' ' .. key)
        return {1, f.g, left, f.o}
        """)

    /// ARGV: me, key. Returns {1, generation, deadline, now, owner} or {0}.
    static let resume = RedisScript(name: "resume", source: prelude + """
        local me, key = ARGV[1], ARGV[2]
        local h = P .. ':c:' .. key
        local f = load(h)
        if not f or f.s ~= 'p' then return {0} end
        local n = now()
        local deadline = n + tonumber(f.r)
        wakeIfEarliest(deadline, me)
        redis.call('HSET', h, 's', 'r', 'dl', deadline)
        redis.call('HDEL', h, 'r')
        redis.call('ZADD', P .. ':d', deadline, key)
        tell(f.o, me, 'r ' .. f.g .. ' ' .. deadline .. ' ' .. key)
        return {1, f.g, deadline, n, f.o}
        """)

    /// ARGV: key. Returns {1, remaining µs} or {0}.
    static let remaining = RedisScript(name: "remaining", source: prelude + """
        local f = load(P .. ':c:' .. ARGV[1])
        if not f then return {0} end
        return {1, remainingOf(f, now())}
        """)

    /// ARGV: me, most to claim. Marks the member seen, forgets members unseen for 10 s, then
    /// claims what is due: each claimed countdown leaves every structure at once (so one member
    /// owns each finish), and its finish goes to its observer's inbox unless that is here.
    /// Returns {now, earliest deadline left or -1, claimed count, {generation, owner, …} observed here}.
    static let claim = RedisScript(name: "claim", source: prelude + """
        local me, most = ARGV[1], tonumber(ARGV[2])
        local n = now()
        redis.call('ZADD', P .. ':m', n, me)
        redis.call('ZREMRANGEBYSCORE', P .. ':m', '-inf', n - 10000000)
        local due = redis.call('ZRANGEBYSCORE', P .. ':d', '-inf', n, 'LIMIT', 0, most)
        local here = {}
        if #due > 0 then
          redis.call('ZREM', P .. ':d', unpack(due))
          redis.call('SREM', P .. ':k', unpack(due))
          for _, key in ipairs(due) do
            local h = P .. ':c:' .. key
            local v = redis.call('HMGET', h, 'g', 'o')
            redis.call('DEL', h)
            if string.match(v[2], '^[^/]*') == me then
              here[#here + 1] = v[1]
              here[#here + 1] = v[2]
            else
              tell(v[2], me, 'f ' .. v[1] .. ' ' .. v[2] .. ' ' .. key)
            end
          end
        end
        local first = redis.call('ZRANGE', P .. ':d', 0, 0, 'WITHSCORES')
        return {n, first[2] or '-1', #due, here}
        """)
}
#endif
