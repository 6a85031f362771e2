#if Redis
/// The keyspace strategy's operations. Each is a small script so that a start or an attach is
/// one atomic step, as the contract asks; the timing is the tutorials': a key per countdown,
/// `P:t:<key>`, holding `generation duration r` with a TTL (`PX`), or `generation duration p
/// remaining` with none while paused, and the end heard as the key's expiry notification.
/// What another member must hear (an observer attached, a cancel, a pause, a resume) is
/// published on `P:own` with the member that did it, fire-and-forget as the notifications are:
/// `l g owner` (an observer attached), `x g member`, `p g remaining member`, `r g deadline member`.
enum KeyspaceScripts {
    private static let prelude = """
        local P = KEYS[1]
        local function now()
          local t = redis.call('TIME')
          return tonumber(t[1]) * 1000000 + tonumber(t[2])
        end
        local function load(t)
          local v = redis.call('GET', t)
          if not v then return nil end
          local g, d, s, r = string.match(v, '^(%d+) (%d+) (%a) ?(%d*)$')
          return { g = g, d = d, s = s, r = r }
        end
        local function deadlineOf(t)
          return redis.call('PEXPIRETIME', t) * 1000
        end

        """

    /// ARGV: owner, key, duration µs, attach only (1/0).
    /// Returns {0 started | 1 attached | 3 nothing, generation, duration, 'r'/'p', deadline,
    /// remaining, now}.
    static let start = RedisScript(name: "keyspace-start", source: prelude + """
        local owner, key = ARGV[1], ARGV[2]
        local t = P .. ':t:' .. key
        local n = now()
        local f = load(t)
        if f then
          redis.call('PUBLISH', P .. ':own', 'l ' .. f.g .. ' ' .. owner)
          if f.s == 'p' then return {1, f.g, f.d, 'p', 0, tonumber(f.r), n} end
          local deadline = deadlineOf(t)
          local left = deadline - n
          if left < 0 then left = 0 end
          return {1, f.g, f.d, 'r', deadline, left, n}
        end
        if ARGV[4] == '1' then return {3} end
        local d = tonumber(ARGV[3])
        local ms = math.ceil(d / 1000)
        local g = redis.call('INCR', P .. ':seq')
        redis.call('SET', t, g .. ' ' .. d .. ' r', 'PX', ms)
        return {0, g, d, 'r', deadlineOf(t), d, n}
        """)

    /// ARGV: key, me. Returns {1, generation} or {0}.
    static let cancel = RedisScript(name: "keyspace-cancel", source: prelude + """
        local t = P .. ':t:' .. ARGV[1]
        local f = load(t)
        if not f then return {0} end
        redis.call('DEL', t)
        redis.call('PUBLISH', P .. ':own', 'x ' .. f.g .. ' ' .. ARGV[2])
        return {1, f.g}
        """)

    /// ARGV: key, me. Returns {1, generation, remaining µs} or {0}.
    static let pause = RedisScript(name: "keyspace-pause", source: prelude + """
        local t = P .. ':t:' .. ARGV[1]
        local f = load(t)
        if not f or f.s ~= 'r' then return {0} end
        local left = deadlineOf(t) - now()
        if left <= 0 then return {0} end
        redis.call('SET', t, f.g .. ' ' .. f.d .. ' p ' .. left)
        redis.call('PUBLISH', P .. ':own', 'p ' .. f.g .. ' ' .. left .. ' ' .. ARGV[2])
        return {1, f.g, left}
        """)

    /// ARGV: key, me. Returns {1, generation, deadline, now} or {0}.
    static let resume = RedisScript(name: "keyspace-resume", source: prelude + """
        local t = P .. ':t:' .. ARGV[1]
        local f = load(t)
        if not f or f.s ~= 'p' then return {0} end
        local n = now()
        redis.call('SET', t, f.g .. ' ' .. f.d .. ' r', 'PX', math.ceil(tonumber(f.r) / 1000))
        local deadline = deadlineOf(t)
        redis.call('PUBLISH', P .. ':own', 'r ' .. f.g .. ' ' .. deadline .. ' ' .. ARGV[2])
        return {1, f.g, deadline, n}
        """)

    /// ARGV: key. Returns {1, remaining µs} or {0}.
    static let remaining = RedisScript(name: "keyspace-remaining", source: prelude + """
        local t = P .. ':t:' .. ARGV[1]
        local f = load(t)
        if not f then return {0} end
        if f.s == 'p' then return {1, tonumber(f.r)} end
        local left = deadlineOf(t) - now()
        if left < 0 then left = 0 end
        return {1, left}
        """)
}
#endif
