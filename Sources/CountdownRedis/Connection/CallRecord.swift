#if Redis
import Foundation
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
/// the client name before its `:`) and `arg[1]`, `arg[2]`, … (the rest of `ARGV`), and returns
/// its answer as a table, `return {…}`, always as the last statement of its block; the caller receives it with `n` first. A replayed answer carries the `n` of the
/// resend, so that a deadline in it is read against the server's clock now. Answers are kept
/// packed with Redis' own `cmsgpack` (exact for integers up to 2^53, as µs deadlines are): a
/// record written with Lua's string formatting cost a start about a fifth of its time.
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
          local again = cmsgpack.unpack(known[2])
          again[1] = n
          return again
        end
        local fresh = ack > w
        if fresh then
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
        local answer
        repeat
        \(inline(body))
        until true
        table.insert(answer, 1, n)
        redis.call('HSET', R, ARGV[2], cmsgpack.pack(answer), 'w', w)
        -- Refreshed with each batch (each call, one at a time): a record lives a minute past
        -- the last batch, and is read again within a second of its call.
        if fresh then redis.call('PEXPIRE', R, 60000) end
        return answer
        """
    }

    /// The body as it runs in place, with no function made for it on every call: its own
    /// arguments, `arg[i]`, read from `ARGV` after the call id; each `return {…}` (always the
    /// last statement of its block, as Lua wants a `break` too) sets the answer and leaves.
    static func inline(_ body: String) -> String {
        var text = body
        for index in stride(from: 9, through: 1, by: -1) { text = text.replacingOccurrences(of: "arg[\(index)]", with: "ARGV[\(index + 3)]") }
        return text.replacingOccurrences(of: "return {", with: "answer = {").split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.contains("answer = {") ? Self.breaking(String(line)) : String(line) }.joined(separator: "\n")
    }

    /// `… answer = {…} …` with `break` after the table that `answer = ` begins.
    private static func breaking(_ line: String) -> String {
        guard let start = line.range(of: "answer = {") else { return line }
        var depth = 0
        var index = line.index(before: start.upperBound)
        while index < line.endIndex {
            if line[index] == "{" { depth += 1 }
            if line[index] == "}" {
                depth -= 1
                if depth == 0 { return String(line[...index]) + " break" + String(line[line.index(after: index)...]) }
            }
            index = line.index(after: index)
        }
        return line
    }
}
#endif
