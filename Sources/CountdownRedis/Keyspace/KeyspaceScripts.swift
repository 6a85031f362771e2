#if Redis
/// The keyspace strategy's operations. Each is a small script so that a start or an attach is
/// one atomic step, as the contract asks, and recorded (``CallRecord``) so that a call sent again
/// is answered the same; the timing is the tutorials': a key per countdown, `P:t:<key>`,
/// holding `generation duration r deadline attaches change owner` with a TTL, or `generation
/// duration p remaining attaches change owner` with none while paused (`change`: how many times
/// it was paused or resumed), and the end heard as the key's expiry notification. The deadline
/// is kept in µs beside the TTL, which Redis keeps in whole milliseconds: the TTL is set to the
/// millisecond at or after it (`PXAT`), so that the expiry never comes early, and the remaining
/// time is read from the deadline, so that a resume never gives back more than the pause froze
/// (a TTL rounded up did, by up to a millisecond). A value written before the deadline was kept
/// holds 0 there, and its deadline is read from the TTL. What another member must hear is published on `P:own`, fire-and-forget as the
/// notifications are, addressed to the observer's token as the sorted set's inbox messages are
/// (``FleetMessage``): `l g token key`, `x g token key`, `p g change remaining token key`,
/// `r g change deadline token key`.
enum KeyspaceScripts {
    /// The reads of ``load`` run before any write: Redis refuses them before anything was written.
    private typealias K = KeyspaceKeys

    /// Lua that reads the countdown at `t` into `f` (nil when there is none), and the deadline
    /// (µs) of a running one into `f.dl`.
    private static let load = """
        local f
        do
          local v = redis.call('GET', t)
          if v then
            local g, d, s, r, a, k, o = string.match(v, '^(%d+) (%d+) (%a) (%d+) (%d+) (%d+) (%S+)$')
            if g then f = {g = g, d = d, s = s, r = r, a = a, k = k, o = o} end
            if f and s == 'r' then
              f.dl = tonumber(r)
              if f.dl == 0 then f.dl = redis.call('PEXPIRETIME', t) * 1000 end
            end
          end
        end
        """

    /// arg: owner token, key, duration µs, attach only (1/0).
    /// Answers {now, 0 started | 1 attached | 3 nothing, generation, duration, 'r'/'p',
    /// deadline, remaining, attach serial, change}.
    /// The scripts the callers' pipe runs, loaded when it is made.
    static var callers: [RedisScript] { [start, cancel, pause, resume, remaining] }

    static let start = RedisScript.recorded(
        "keyspace-start", expiry: .refreshedByEachCall, uses: [.init("SET", K.countdown), .init("PUBLISH", K.channel), .init("INCR", K.serial)], body: """
        local owner, key = arg[1], arg[2]
        local t = P .. ':t:' .. key
        \(load)
        if f then
          local a = tonumber(f.a) + 1
          redis.call('SET', t, f.g .. ' ' .. f.d .. ' ' .. f.s .. ' ' .. f.r .. ' ' .. string.format('%d', a) .. ' ' .. f.k .. ' ' .. owner, 'KEEPTTL')
          redis.call('PUBLISH', P .. ':own', 'l ' .. f.g .. ' ' .. f.o .. ' ' .. key)
          if f.s == 'p' then return {1, f.g, f.d, 'p', 0, tonumber(f.r), a, f.k} end
          return {1, f.g, f.d, 'r', f.dl, math.max(0, f.dl - n), a, f.k}
        end
        if arg[4] == '1' then return {3} end
        local d = tonumber(arg[3])
        local g = redis.call('INCR', P .. ':seq')
        local deadline = n + d
        redis.call('SET', t, string.format('%d', g) .. ' ' .. arg[3] .. ' r ' .. string.format('%d', deadline) .. ' 0 0 ' .. owner,
          'PXAT', string.format('%d', math.ceil(deadline / 1000)))
        return {0, g, d, 'r', deadline, d, 0, 0}
        """)

    /// arg: key. Answers {now, 1, generation, owner} or {now, 0}.
    static let cancel = RedisScript.recorded(
        "keyspace-cancel", expiry: .refreshedByEachCall, uses: [.init("DEL", K.countdown), .init("PUBLISH", K.channel)], body: """
        local key = arg[1]
        local t = P .. ':t:' .. key
        \(load)
        if not f then return {0} end
        redis.call('DEL', t)
        redis.call('PUBLISH', P .. ':own', 'x ' .. f.g .. ' ' .. f.o .. ' ' .. key)
        return {1, f.g, f.o}
        """)

    /// arg: key. Answers {now, 1, generation, remaining µs, owner, change} or {now, 0}.
    static let pause = RedisScript.recorded(
        "keyspace-pause", expiry: .refreshedByEachCall, uses: [.init("SET", K.countdown), .init("PUBLISH", K.channel)], body: """
        local key = arg[1]
        local t = P .. ':t:' .. key
        \(load)
        if not f or f.s ~= 'r' then return {0} end
        local left = f.dl - n
        if left <= 0 then return {0} end
        local K = string.format('%d', tonumber(f.k) + 1)
        redis.call('SET', t, f.g .. ' ' .. f.d .. ' p ' .. string.format('%d', left) .. ' ' .. f.a .. ' ' .. K .. ' ' .. f.o)
        redis.call('PUBLISH', P .. ':own', 'p ' .. f.g .. ' ' .. K .. ' ' .. string.format('%d', left) .. ' ' .. f.o .. ' ' .. key)
        return {1, f.g, left, f.o, K}
        """)

    /// arg: key. Answers {now, 1, generation, deadline, owner, change} or {now, 0}.
    static let resume = RedisScript.recorded(
        "keyspace-resume", expiry: .refreshedByEachCall, uses: [.init("SET", K.countdown), .init("PUBLISH", K.channel)], body: """
        local key = arg[1]
        local t = P .. ':t:' .. key
        \(load)
        if not f or f.s ~= 'p' then return {0} end
        local K = string.format('%d', tonumber(f.k) + 1)
        local deadline = n + tonumber(f.r)
        redis.call('SET', t, f.g .. ' ' .. f.d .. ' r ' .. string.format('%d', deadline) .. ' ' .. f.a .. ' ' .. K .. ' ' .. f.o,
          'PXAT', string.format('%d', math.ceil(deadline / 1000)))
        redis.call('PUBLISH', P .. ':own', 'r ' .. f.g .. ' ' .. K .. ' ' .. string.format('%d', deadline) .. ' ' .. f.o .. ' ' .. key)
        return {1, f.g, deadline, f.o, K}
        """)

    /// ARGV: key. Answers {1, remaining µs} or {0}. Reads only.
    static let remaining = RedisScript.reading("keyspace-remaining", source: """
        local t = KEYS[1] .. ':t:' .. ARGV[1]
        \(load)
        if not f then return {0} end
        if f.s == 'p' then return {1, tonumber(f.r)} end
        local x = redis.call('TIME')
        local left = f.dl - (tonumber(x[1]) * 1000000 + tonumber(x[2]))
        if left < 0 then left = 0 end
        return {1, left}
        """)
}
#endif
