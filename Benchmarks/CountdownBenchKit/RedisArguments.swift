import Foundation
#if Redis
import CountdownRedis
#endif

/// The options of every command that may use Redis (`run`, `conformance`, `fleet`): the server,
/// the namespace every key goes under, and the timeouts, read and checked once.
struct RedisArguments {
    static let help = """
          --redis URL           The Redis backends' server (a build with the Redis trait):
                                redis://[user[:password]@]host[:port][/db][?socket_timeout=S],
                                unix:///path?db=N, or HOST:PORT; without it REDIS_URL, else a
                                redis-server of its own on a loopback port. The password is
                                shown nowhere here, but every user of the machine sees a
                                command's arguments (ps): give a password through REDIS_URL.
          --namespace NAME      Every key made on Redis is under NAME ({NAME:…}; default
                                \(defaultRoot)): a user granted only ~{NAME:* runs it. On a
                                server --redis names, the keys are deleted when the command
                                ends or is stopped (Ctrl-C, SIGTERM), and a killed run's by
                                the next, a minute later; that needs +scan.
          --redis-timeout D     How long a Redis command waits for its answer (default 5s, or
                                the URL's socket_timeout).
          --redis-connect-timeout D
                                How long connecting may take (default 2s, or the URL's
                                socket_connect_timeout).
        """
    static let defaultRoot = "countdown-bench"

    /// `--redis`, else `REDIS_URL`.
    let url: String?
    let namespace: String?
    let timeout: Duration?
    let connectTimeout: Duration?

    init(_ args: inout Arguments) throws(UsageError) {
        let given = try args.value("--redis")
        url = given ?? ProcessInfo.processInfo.environment["REDIS_URL"]
        namespace = try args.value("--namespace")
        timeout = try args.duration("--redis-timeout")
        connectTimeout = try args.duration("--redis-connect-timeout")
        if let namespace {
            // Braces would end the hash tag the keys share; blanks and control characters would
            // not survive a shell, a log line or redis-cli.
            guard (1...64).contains(namespace.utf8.count),
                  !namespace.contains(where: { "{}".contains($0) || $0.isWhitespace || $0.asciiValue.map { $0 < 32 || $0 == 127 } == true })
            else {
                throw UsageError("--namespace takes 1 to 64 bytes without braces, blanks or control characters, not '\(namespace)'")
            }
        }
        #if Redis
        if url != nil { _ = try endpoint() }
        #else
        // REDIS_URL alone is no error here: a build without the trait has no use for it.
        if given != nil || namespace != nil || timeout != nil || connectTimeout != nil {
            throw UsageError("--redis, --namespace and the Redis timeouts are for the Redis strategies, which this build leaves out: build with swift build --traits Redis")
        }
        #endif
    }

    #if Redis
    /// The server named, with the timeouts given; nil without one. A bad URL is a usage error
    /// that shows it without its password.
    func endpoint() throws(UsageError) -> RedisEndpoint? {
        guard let url else { return nil }
        var endpoint: RedisEndpoint
        do {
            endpoint = try RedisEndpoint.parse(url)
        } catch {
            throw UsageError("--redis: \(error)")
        }
        if let timeout { endpoint.commandTimeout = timeout }
        if let connectTimeout { endpoint.connectTimeout = connectTimeout }
        return endpoint
    }
    #endif

    /// The backends' server and namespace root from now on (``RedisTarget``).
    func use() throws(UsageError) {
        #if Redis
        RedisTarget.use(try endpoint(), root: namespace)
        #endif
    }

    /// Deletes what the command made on the user's server (``RedisTarget/leaveAsFound()``),
    /// and says so on stderr, whatever `--no-progress` asked: it is the user's server.
    static func leaveServerAsFound() {
        #if Redis
        if let said = RedisTarget.leaveAsFound() { FileHandle.standardError.write(Data("countdown-bench: \(said)\n".utf8)) }
        #endif
    }
}
