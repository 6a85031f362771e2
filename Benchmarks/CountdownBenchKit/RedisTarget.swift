#if Redis
import Countdown
import CountdownConformance
import CountdownRedis
import CountdownSupport
import Dispatch
import Foundation

/// The Redis server the benchmark's fleet backends use, and where their keys go on it: the
/// server `--redis URL` (or `REDIS_URL`) names, else a `redis-server` of the benchmark's own,
/// started on first use on a free loopback port and stopped when the process exits, or when
/// SIGINT or SIGTERM ends it.
///
/// Every namespace the benchmark makes is under one root (`--namespace`, `countdown-bench`
/// unless given) and the run's own name: `ROOT:RUN:…`, its keys `{ROOT:RUN:…}…`, so that a user
/// granted only `~{ROOT:*` runs it, and the run's keys are told from another run's. The fleet
/// members a command starts make theirs under the same run (``runVariable``). On a server the
/// user gave, what the run made is deleted when the command ends (``leaveAsFound()``), or when
/// SIGINT or SIGTERM ends it. A process killed outright (SIGKILL) leaves its keys, and its
/// lease (``NamespaceLease``), which runs out within a minute: the next run deletes them then.
enum RedisTarget {
    private static let chosen = Locked<RedisEndpoint?>(nil)
    private static let own = Locked<LocalRedisServer?>(nil)
    private static let names = Locked<(root: String, used: Bool)>((RedisArguments.defaultRoot, false))
    /// The environment variable that gives a fleet member its run's name.
    static let runVariable = "COUNTDOWN_BENCH_RUN"
    /// This run's name: its starter's, in a fleet member; else a fresh one.
    static let run = ProcessInfo.processInfo.environment[runVariable]
        ?? String(UInt64.random(in: 0...UInt64.max) % 36_000_000_000, radix: 36)
    private static let lease = Locked<NamespaceLease?>(nil)
    /// Every scheduler made on the target, held weakly: stopped before a signal's sweep, so that
    /// no start still on its way writes a key after it.
    private struct Made: Sendable { weak var scheduler: RedisCountdownScheduler? }
    private static let made = Locked<[Made]>([])
    /// Kept for the life of the process: a signal source let go stops watching.
    private static let signalSources = Locked<[any DispatchSourceSignal]>([])

    /// `--redis URL`, or `REDIS_URL`; `--namespace`.
    static func use(_ endpoint: RedisEndpoint?, root: String?) {
        if let endpoint { chosen.withLock { $0 = endpoint } }
        if let root { names.withLock { $0.root = root } }
    }

    static func endpoint() throws(CountdownError) -> RedisEndpoint {
        if let endpoint = chosen.withLock({ $0 }) {
            used()
            return endpoint
        }
        return try server().endpoint
    }

    /// The benchmark's own server (nil with `--redis`): its process, for its CPU time.
    static func ownServer() -> LocalRedisServer? { own.withLock { $0 } }

    private static func server() throws(CountdownError) -> LocalRedisServer {
        try own.withLock { (own: inout LocalRedisServer?) throws(CountdownError) -> LocalRedisServer in
            if let own { return own }
            do {
                let server = try LocalRedisServer()
                own = server
                atexit { RedisTarget.ownServer()?.remove() }
                // A signal's default action skips `atexit`: Ctrl-C left the server running.
                watchSignals()
                return server
            } catch {
                throw .unavailable(.refused, "no --redis given, and \(error)")
            }
        }
    }

    /// `scheduler`, remembered (weakly) to be shut down before a signal's sweep.
    static func track(_ scheduler: RedisCountdownScheduler) -> RedisCountdownScheduler {
        made.withLock { made in
            made.removeAll { $0.scheduler == nil }
            made.append(Made(scheduler: scheduler))
        }
        return scheduler
    }

    /// What every namespace made begins with (`--namespace`).
    static var root: String { names.withLock { $0.root } }

    /// `name` under the root and the run: a namespace whose keys go when the run ends.
    static func namespace(_ name: String) -> String {
        used()
        return "\(root):\(run):\(name)"
    }

    /// A name for a namespace of its own (``namespace(_:)`` makes it one).
    static func freshName() -> String {
        used()
        return "bench-\(UInt64.random(in: 0...UInt64.max))"
    }

    /// The run makes keys: on the user's server, they are deleted at the end, and at SIGINT or
    /// SIGTERM.
    private static func used() {
        let first = names.withLock { names in
            defer { names.used = true }
            return !names.used
        }
        guard first, !CountdownConformance.isFleetMember, let endpoint = chosen.withLock({ $0 }) else { return }
        watchSignals()
        holdLease(on: endpoint)
    }

    /// Deletes what runs killed earlier left under the root (their leases ran out), then holds
    /// this run's, so that a later run tells its keys from theirs. Calls made meanwhile on other
    /// threads make keys under this run already: never taken for another's.
    private static func holdLease(on endpoint: RedisEndpoint) {
        let root = names.withLock { $0.root }
        do {
            let abandoned = try NamespaceLease.abandoned(under: root, except: run, at: endpoint)
            if !abandoned.isEmpty {
                let deleted = try NamespaceSweep.delete(abandoned, at: endpoint)
                say("deleted the \(deleted) keys \(abandoned.count) earlier run(s) left under {\(root):…} (killed: their lease ran out)")
            }
        } catch {
            say("could not look for keys earlier runs left under {\(root):…} (\(error))")
        }
        do {
            let held = try NamespaceLease("\(root):\(run)", at: endpoint)
            lease.withLock { $0 = held }
        } catch {
            say("could not hold this run's lease on {\(root):\(run)} (\(error)): were it killed, the next run could not tell its keys")
        }
    }

    private static func say(_ line: String) {
        FileHandle.standardError.write(Data("countdown-bench: \(line)\n".utf8))
    }

    static func freshNamespace() -> String { namespace(freshName()) }

    /// Deletes every key the run made on the user's server, its fleet members' too (none on our
    /// own, which goes with its files): what to say of it, nil when there was nothing to do. A
    /// fleet member leaves this to the process that started it.
    @discardableResult
    static func leaveAsFound() -> String? {
        guard !CountdownConformance.isFleetMember, let endpoint = chosen.withLock({ $0 }) else { return nil }
        let (root, used) = names.withLock { names in
            defer { names.used = false }
            return (names.root, names.used)
        }
        guard used else { return nil }
        lease.withLock { $0 }?.stop()
        do {
            let deleted = try NamespaceSweep.delete(["\(root):\(run)"], at: endpoint)
            return "deleted the \(deleted) keys this run left under {\(root):\(run):…} on \(endpoint)"
        } catch {
            return "could not delete the keys this run left under {\(root):\(run):…} on \(endpoint) (\(error)); "
                + "delete them with: redis-cli --scan --pattern '{\(root):\(run):*' | xargs redis-cli del"
        }
    }

    /// SIGINT (Ctrl-C) or SIGTERM: delete what was made on the user's server, then end as the
    /// signal would have (128 + its number), through `exit`, whose `atexit` stops our own server.
    private static func watchSignals() {
        guard !CountdownConformance.isFleetMember else { return }
        signalSources.withLock { sources in
            guard sources.isEmpty else { return }
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler {
                    for scheduler in made.withLock({ $0.compactMap(\.scheduler) }) { scheduler.shutdown() }
                    if let said = leaveAsFound() { say(said) }
                    exit(128 + number)
                }
                source.resume()
                sources.append(source)
            }
        }
    }
}
#endif
