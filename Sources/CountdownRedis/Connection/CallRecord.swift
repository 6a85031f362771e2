#if Redis
import Foundation
/// What makes a script that changes something safe to send twice: the server keeps its answer
/// under the caller's call id, and a call sent again is answered from it without being run
/// again (an idempotency key, as payment APIs keep one per request).
///
/// A recorded script's `ARGV` begins with the call id: the link's client name
/// (`<member>:<role>`), the call's serial (growing by one per call of that client), and `K`,
/// the size of the client's ring. Under the namespace `P` (`KEYS[1]`), `P:a:<client>` is a hash
/// of `K` slots: slot `serial mod K` holds `serial answer` (the answer packed with Redis' own
/// `cmsgpack`, exact for integers up to 2^53, as µs deadlines are). A call whose slot holds its
/// own serial is a resend: it is answered from the slot, which it writes again, so that a
/// `WAIT` sent after it waits for a write at least as late as the first (``ReplicaWait``). A
/// slot holding a newer serial proves the call is a copy that lost its way (sent again,
/// answered, and arriving late on a connection already closed, `K` calls later): it is answered
/// `{now, -1}` and does nothing. The link never
/// has more than `K/4` calls in flight, so a slot is reused only when its call is long answered,
/// and nothing has to be deleted per call. A member's rings go with it: the sorted set's claims
/// delete those of members unseen for ten minutes (``ZSetScripts/claim``); the keyspace strategy,
/// whose members never claim, gives them a minute's TTL refreshed by each call.
///
/// The body sees `P`, `n` (the server's clock in µs, read once with `TIME`) and `N` (the same as
/// text), `me` (the member: the client name before its `:`) and `arg[1]`, `arg[2]`, … (the rest
/// of `ARGV`), and returns its answer as a table, `return {…}`, always as the last statement of
/// its block; the caller receives it with `n` first. A replayed answer carries the `n` of the
/// resend, so that a deadline in it is read against the server's clock now.
///
/// Every argument to `redis.call` is passed as text, never as a Lua number: Redis turns a number
/// into text with `%.17g`, glibc's floating-point formatter, some thousands of instructions each
/// (callgrind: 6.8 % of a start's); text comes as it came (`ARGV`, `TIME`'s own fields) or from
/// `string.format('%d', …)`, the integer path. Measured with callgrind on redis-server, a start
/// took 115 000 instructions before records, 161 000 with a hash of answers deleted once read
/// (one call at a time; 146 000 pipelined), and 137 000 with this ring, either way.
enum CallRecord {
    /// How the records of a script's clients are let go.
    enum Expiry {
        /// Swept with their member, ten minutes after its last claim (the sorted set).
        case withTheMember
        /// A TTL of a minute, refreshed by each call (the keyspace strategy: its members never claim).
        case refreshedByEachCall
    }

    /// The recorded script: `#!lua` (it may write: see ``RedisScript``), then `checks` (Lua that
    /// checks every command before any runs), then the record's lookup and the body.
    static func wrap(_ body: String, expiry: Expiry = .withTheMember, checks: String = "") -> String {
        """
        #!lua
        local P = KEYS[1]
        local R = P .. ':a:' .. ARGV[1]
        \(checks)
        local t = redis.call('TIME')
        local n = tonumber(t[1]) * 1000000 + tonumber(t[2])
        local N = t[1] .. string.sub('00000' .. t[2], -6)
        local me = string.match(ARGV[1], '^[^:]*')
        local serial = tonumber(ARGV[2])
        local slot = string.format('%d', serial % tonumber(ARGV[3]))
        local kept = redis.call('HGET', R, slot)
        if kept then
          local space = string.find(kept, ' ', 1, true)
          local was = tonumber(string.sub(kept, 1, space - 1))
          if was == serial then
            redis.call('HSET', R, slot, kept)
            local again = cmsgpack.unpack(string.sub(kept, space + 1))
            again[1] = n
            return again
          end
          if was > serial then return {n, -1} end
        end
        local answer
        repeat
        \(inline(body))
        until true
        table.insert(answer, 1, n)
        redis.call('HSET', R, slot, ARGV[2] .. ' ' .. cmsgpack.pack(answer))
        \(expiry == .refreshedByEachCall ? "redis.call('PEXPIRE', R, '60000')" : "")
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
