#if Redis
/// What makes a script that changes something safe to send twice: the server keeps its answer
/// under the caller's call id, and a call sent again is answered from it without being run
/// again (an idempotency key, as payment APIs keep one per request).
///
/// A recorded script's `ARGV` begins with the call id: the link's client name
/// (`<member>:<role>`), the call's serial, and the serial of the first call of its batch, below
/// which every call of the client has been answered and read (its acknowledgement). Under the
/// namespace `P` (`KEYS[1]`), `P:a:<client>` is a hash: one field per serial still unread, the
/// answer as text, and `w`, the client's watermark. A call whose serial is below the watermark
/// is a copy that lost its way (sent again, answered, and then arriving late on a connection
/// already closed): it is answered `{now, -1}` and does nothing. The hash expires a minute after
/// its last call, with the client.
///
/// The body sees `P`, `n` (the server's clock in µs, read once with `TIME`), `me` (the member:
/// the client name before its `:`) and `arg` (the rest of `ARGV`), and returns its answer as a
/// table; the caller receives it with `n` first. A replayed answer carries the `n` of the
/// resend, so that a deadline in it is read against the server's clock now. Answers hold
/// integers, words without spaces or commas, and at most one level of lists of those.
enum CallRecord {
    static func wrap(_ body: String) -> String {
        """
        local P = KEYS[1]
        local t = redis.call('TIME')
        local n = tonumber(t[1]) * 1000000 + tonumber(t[2])
        local R = P .. ':a:' .. ARGV[1]
        local me = string.match(ARGV[1], '^[^:]*')
        local serial, ack = tonumber(ARGV[2]), tonumber(ARGV[3])
        local known = redis.call('HMGET', R, 'w', ARGV[2])
        local w = tonumber(known[1]) or 0
        if serial < w then return {n, -1} end
        if known[2] then
          local again = {n}
          for field in string.gmatch(known[2], '[^ ]+') do
            if string.sub(field, 1, 1) == '@' then
              local list = {}
              for item in string.gmatch(string.sub(field, 2), '[^,]+') do list[#list + 1] = item end
              again[#again + 1] = list
            else
              again[#again + 1] = field
            end
          end
          return again
        end
        if ack > w then
          local gone = {}
          if ack - w <= 256 then
            for s = w, ack - 1 do gone[#gone + 1] = s end
          else
            for _, f in ipairs(redis.call('HKEYS', R)) do
              local s = tonumber(f)
              if s and s < ack then gone[#gone + 1] = f end
            end
          end
          for i = 1, #gone, 1000 do redis.call('HDEL', R, unpack(gone, i, math.min(i + 999, #gone))) end
          w = ack
        end
        local arg = {}
        for i = 4, #ARGV do arg[i - 3] = ARGV[i] end
        local answer = (function()
        \(body)
        end)()
        local text = {}
        for i, x in ipairs(answer) do
          if type(x) == 'table' then
            local list = {}
            for j, y in ipairs(x) do list[j] = type(y) == 'number' and string.format('%d', y) or y end
            text[i] = '@' .. table.concat(list, ',')
          elseif type(x) == 'number' then
            text[i] = string.format('%d', x)
          else
            text[i] = x
          end
        end
        redis.call('HSET', R, ARGV[2], table.concat(text, ' '), 'w', w)
        redis.call('PEXPIRE', R, 60000)
        table.insert(answer, 1, n)
        return answer
        """
    }
}
#endif
