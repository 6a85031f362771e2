#if Redis
import CountdownSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `redis-server` of our own, on a free loopback port in a temporary directory: what the
/// tests and the benchmark run against unless given a server (`--redis URL`). Stopped,
/// and its directory removed, by ``stop()`` or when released.
package final class LocalRedisServer: Sendable {
    /// Why a server could not be started.
    package struct StartError: Error, Sendable, CustomStringConvertible {
        /// What went wrong, in one line.
        package let description: String
    }

    /// Where it listens: 127.0.0.1 and a port that was free.
    package let endpoint: RedisEndpoint
    /// The directory the server runs in (its append-only file, when asked for, lives here).
    package let directory: URL
    private let process: ChildProcess
    private let extraSettings: [String]

    /// `extraSettings`: more `redis-server` options, as `["--appendonly", "yes"]`.
    package convenience init(extraSettings: [String] = []) throws(StartError) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("countdown-redis-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw StartError(description: "cannot make \(directory.path): \(error)")
        }
        try self.init(directory: directory, port: nil, extraSettings: extraSettings)
    }

    /// On `port`, or a free one when nil (tried five times). Package-visible so that a test can
    /// aim it at a port another server holds.
    package init(directory: URL, port: Int?, extraSettings: [String]) throws(StartError) {
        guard let executable = Self.findExecutable() else {
            throw StartError(description: "redis-server is not installed (Debian: apt-get install redis-server; macOS: brew install redis)")
        }
        var lastError = "no attempt"
        for _ in 0..<(port == nil ? 5 : 1) {
            let chosen = port ?? Self.freePort()
            let settings = [
                "--port", String(chosen), "--bind", "127.0.0.1", "--dir", directory.path,
                "--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", "redis.log",
                "--notify-keyspace-events", "Ex",
            ] + extraSettings
            let log = directory.appendingPathComponent("redis.log")
            let logStart = (try? FileManager.default.attributesOfItem(atPath: log.path)[.size] as? Int) ?? 0
            let process = try Self.spawn(executable, settings)
            Self.record(process.id)
            let endpoint = RedisEndpoint(host: "127.0.0.1", port: chosen)
            if Self.waitUntilReady(endpoint, process: process, log: log, from: logStart) {
                self.endpoint = endpoint
                self.directory = directory
                self.process = process
                self.extraSettings = extraSettings
                return
            }
            lastError = Self.lastWarning(in: log, from: logStart).map { "redis-server on port \(chosen) did not start: \($0)" }
                ?? "redis-server on port \(chosen) did not answer PING within 5 s (see \(log.path))"
            process.stop(signal: SIGKILL)
        }
        throw StartError(description: lastError)
    }

    deinit { stop() }

    /// The server's process id, for reading its CPU time from `/proc`.
    package var processIdentifier: Int32 { process.id }

    /// Its CPU time (user and system) so far, from `/proc/<pid>/stat`; nil where there is none.
    package var cpuNanoseconds: UInt64? {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.id)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the command: state is field 3; utime and stime are fields 14 and 15.
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        let ticks = UInt64(sysconf(Int32(_SC_CLK_TCK)))
        return (user + system) * 1_000_000_000 / max(ticks, 1)
    }

    /// Whether its process is still running.
    package var isRunning: Bool { process.isRunning }

    /// Stops the server (SIGTERM: with an append-only file, it writes it out first) and waits.
    package func stop() { process.stop(signal: SIGTERM) }

    /// Stops the server and removes its directory.
    package func remove() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Kills the server with SIGKILL, as a crash would: what the append-only file holds is what
    /// comes back.
    package func kill() { process.stop(signal: SIGKILL) }

    /// A new server on the same port and directory, with the same settings: it loads the
    /// append-only file, if there is one.
    package func restarted() throws(StartError) -> LocalRedisServer {
        stop()
        guard case .tcp(_, let port) = endpoint.address else { throw StartError(description: "a local server listens on TCP") }
        return try LocalRedisServer(directory: directory, port: port, extraSettings: extraSettings)
    }

    private static func spawn(_ executable: String, _ arguments: [String]) throws(StartError) -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // Nothing else of ours: a pipe to a fleet member inherited by the server would keep its
        // write end open after the member is killed, and whoever reads it would wait for an end
        // of file that comes only with the server (seen: every fleet trial of a test run hung
        // once the cluster's six servers were started beside them); an inherited socket would
        // keep a connection the proxy closed open.
        _ = closeFrom?(&actions, 3)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        // The spawning thread may block signals (libdispatch's workers block most): the child
        // would inherit the mask and ignore our SIGTERM. It starts with none blocked.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        #if canImport(Darwin)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_CLOEXEC_DEFAULT))
        #else
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        #endif
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard status == 0 else {
            throw StartError(description: "cannot run \(executable): \(String(cString: strerror(status)))")
        }
        return ChildProcess(id: pid)
    }

    /// The environment variable naming a folder where every server started here leaves a file
    /// named by its process id: CI stops, by those ids, what a killed test left running (never
    /// a server by its name, which could be someone else's).
    package static let processFolderVariable = "COUNTDOWN_REDIS_PIDS"

    private static func record(_ id: pid_t) {
        guard let folder = ProcessInfo.processInfo.environment[processFolderVariable], !folder.isEmpty else { return }
        if !FileManager.default.createFile(atPath: "\(folder)/\(id)", contents: Data("redis-server\n".utf8)) {
            // Said, not dropped: whoever set the variable expects to find every server there.
            FileHandle.standardError.write(Data("countdown: cannot record redis-server \(id) in \(processFolderVariable)=\(folder)\n".utf8))
        }
    }

    private static func findExecutable() -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") + ["/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"] {
            let candidate = "\(folder)/redis-server"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// A port the kernel hands out for a socket bound to port 0, closed again at once; below
    /// 55 536, so that a cluster node's bus port (port + 10 000) exists too.
    private static func freePort() -> Int {
        for _ in 0..<20 {
            let port = anyFreePort()
            if port < 55_536 { return port }
        }
        return anyFreePort()
    }

    private static func anyFreePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Ready when *our* process has said so in its own log and then answers. A PING alone is
    /// not enough: a free port may be taken by another server between our choosing it and
    /// ours binding it (two tests' servers, or a cluster node's bus port at port + 10 000);
    /// ours then exits, and the other one answered our PING (seen in CI: a test's users got
    /// WRONGPASS from another test's server).
    private static func waitUntilReady(_ endpoint: RedisEndpoint, process: ChildProcess, log: URL, from start: Int) -> Bool {
        for _ in 0..<250 {
            guard process.isRunning else { return false }
            if logText(log, from: start).contains("eady to accept connections") {
                // Up: it answers PONG (the connection's own PING), or asks for the password it
                // was started with.
                do {
                    _ = try RedisConnection(endpoint, timeout: .milliseconds(200))
                    return process.isRunning
                } catch .server(let text) where text.hasPrefix("NOAUTH") {
                    return process.isRunning
                } catch {}
            }
            usleep(20_000)
        }
        return false
    }

    /// The log written since `start` (an earlier run's lines, before a restart, are not this one's).
    private static func logText(_ log: URL, from start: Int) -> String {
        guard let data = FileManager.default.contents(atPath: log.path), data.count > start else { return "" }
        return String(decoding: data[start...], as: UTF8.self)
    }

    /// The last two warnings (`#` lines) the server wrote since `start`, without their prefix
    /// or the machine's advice (`WARNING Memory overcommit …`): why it exited, as
    /// "Could not create server TCP listening socket …: Address already in use; Failed listening
    /// on port …, aborting."
    private static func lastWarning(in log: URL, from start: Int) -> String? {
        let warnings = logText(log, from: start).split(separator: "\n").compactMap { line in
            line.range(of: " # ").map { String(line[$0.upperBound...]) }
        }.filter { !$0.hasPrefix("WARNING ") }
        return warnings.isEmpty ? nil : warnings.suffix(2).joined(separator: "; ")
    }
}
/// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
/// module leaves out: looked up at run time, so that an older C library still links (its
/// servers then inherit the process's descriptors). Darwin closes them with
/// `POSIX_SPAWN_CLOEXEC_DEFAULT` instead.
private let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32)? = {
    #if canImport(Glibc)
    guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32).self)
    #else
    return nil
    #endif
}()

/// The server's process, spawned and reaped here rather than through Foundation's `Process`,
/// whose `waitUntilExit` spins a run loop that never hears the exit once the test process is
/// itself exiting (seen: an `atexit` stop that spun a core).
private final class ChildProcess: Sendable {
    let id: pid_t
    private let reaped = Locked(false)

    init(id: pid_t) { self.id = id }

    var isRunning: Bool {
        reaped.withLock { reaped in
            if reaped { return false }
            var status: Int32 = 0
            if waitpid(id, &status, WNOHANG) == id { reaped = true }
            return !reaped
        }
    }

    func stop(signal: Int32) {
        reaped.withLock { reaped in
            guard !reaped else { return }
            _ = kill(id, signal)
            var status: Int32 = 0
            while waitpid(id, &status, 0) == -1 && errno == EINTR {}
            reaped = true
        }
    }
}
#endif
