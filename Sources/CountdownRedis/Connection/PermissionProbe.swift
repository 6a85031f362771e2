#if Redis
import Countdown

/// Whether the user may run every command a strategy uses, on its namespace's keys, asked once
/// when a scheduler is made: one script of `redis.acl_check_cmd`s, answered with every command
/// refused. A grant missing is then one error naming them all, at `init`, rather than a call
/// that fails later, or a member's own thread that fails with nobody to hear it.
/// (`ACL DRYRUN` would answer the same, but only to an administrator.)
struct PermissionProbe {
    /// A command as the probe asks about it: its name and arguments, Lua expressions in terms of
    /// `P`, the namespace's key (`{ns}`); and how the refusal reads.
    struct Ask {
        let arguments: [String]
        let label: String
        init(_ command: String, _ keys: String..., label: String? = nil) {
            arguments = ["'\(command)'"] + keys
            self.label = label ?? ([command] + keys.map { $0.replacingOccurrences(of: "P .. '", with: "{ns}").replacingOccurrences(of: "'", with: "") + "…" })
                .joined(separator: " ")
        }
    }

    let asks: [Ask]

    /// The probe's script: the label of every ask refused.
    var script: RedisScript {
        let lines = asks.map { ask in
            "if not redis.acl_check_cmd(\(ask.arguments.joined(separator: ", "))) then refused[#refused + 1] = '\(ask.label)' end"
        }
        return .reading("permission-probe", source: (["local P, refused = KEYS[1], {}"] + lines + ["return refused"]).joined(separator: "\n"))
    }

    /// Throws `.unavailable(.authentication, …)` naming every command refused under `prefix`.
    func check(_ link: RedisLink, prefix: String, strategy: String) throws(CountdownError) {
        let reply: RedisReply
        do {
            reply = try link.run(script, keys: [prefix], arguments: [])
        } catch {
            throw error.countdownError
        }
        let refused = reply.elements.compactMap(\.text)
        guard refused.isEmpty else {
            throw .unavailable(
                .authentication,
                "this user may not run what \(strategy) needs on \(prefix): \(refused.joined(separator: ", ")) (ACL SETUSER: see the article A fleet on Redis for the grants)")
        }
    }
}
#endif
