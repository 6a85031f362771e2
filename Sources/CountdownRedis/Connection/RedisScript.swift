#if Redis
/// A Lua script run by its digest, loaded again when the server no longer has it (restarted).
///
/// All or nothing: Redis does not roll a script back, so whatever a script wrote before an
/// error stays. A script that writes therefore begins with a `#!lua` line, which declares it
/// may write: a server over `maxmemory` refuses it before it runs, not at its first write (a
/// script without the line is refused at the first write that needs memory, or not at all once
/// it wrote). And before anything else it asks `redis.acl_check_cmd` whether the user may run
/// each command it uses on the namespace's keys: a permission missing refuses the whole call,
/// naming the command, where Redis would refuse it in the middle, naming a line of the script.
/// A script that only reads is declared `no-writes` (it runs on a server over `maxmemory` too).
struct RedisScript: Sendable {
    let name: String
    let source: String
    /// Whether the script keeps its answer under the caller's call id (``CallRecord``): every
    /// script that changes something and may be sent twice does, so that sending it again is
    /// answered the same.
    let recorded: Bool
    /// The commands the script checks before it runs any (each once, in the order given).
    let commands: [String]

    /// A command a script runs, and a Lua expression of a key it runs it on (one of the
    /// namespace's kinds of key: permissions are granted by pattern, per namespace).
    struct Use: Sendable {
        let command: String
        let key: String
        init(_ command: String, _ key: String) {
            self.command = command
            self.key = key
        }
    }

    /// A script that changes something and may be sent twice: its source is the body of
    /// ``CallRecord/wrap(_:expiry:)``, which runs `uses` (and the record's own commands) only
    /// after checking them.
    static func recorded(_ name: String, expiry: CallRecord.Expiry = .withTheMember, uses: [Use], body: String) -> RedisScript {
        let all = uses + [Use("HSET", "R")] + (expiry == .refreshedByEachCall ? [Use("PEXPIRE", "R")] : [])
        return RedisScript(name: name, source: CallRecord.wrap(body, expiry: expiry, checks: guardLua(name, all)), recorded: true, commands: all.map(\.command))
    }

    /// A script that changes something and is never sent twice (``ZSetScripts/moveInbox``).
    static func writing(_ name: String, uses: [Use], source: String) -> RedisScript {
        RedisScript(name: name, source: "#!lua\n" + guardLua(name, uses) + "\n" + source, recorded: false, commands: uses.map(\.command))
    }

    /// A script that only reads.
    static func reading(_ name: String, source: String) -> RedisScript {
        RedisScript(name: name, source: "#!lua flags=no-writes\n" + source, recorded: false, commands: [])
    }

    /// Lua that refuses the call, before it runs anything else, when the user may not run one
    /// of `uses`: one `redis.acl_check_cmd` each, some 2 000 instructions on redis-server (see
    /// ``ZSetEngine/startsPerScript``). The reply begins `NOPERM`, as Redis' own refusals do.
    static func guardLua(_ name: String, _ uses: [Use]) -> String {
        var seen = Set<String>()
        return uses.filter { seen.insert("\($0.command) \($0.key)").inserted }.map { use in
            "if not redis.acl_check_cmd('\(use.command)', \(use.key)) then return redis.error_reply('NOPERM this user may not run "
                + "\(use.command) on ' .. \(use.key) .. ' (the \(name) script checks every command before it runs any: nothing was written)') end"
        }.joined(separator: "\n")
    }
}
#endif
