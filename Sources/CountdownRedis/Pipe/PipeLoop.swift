#if Redis
import CountdownSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The work of a ``RedisPipe``'s thread, and its state, which no other thread touches: the
/// connection, where it goes (a cluster's `MOVED`), the scripts' digests and the requests on
/// the wire. Each turn writes everything callers queued since the last one in one write, then
/// reads the answers that have come (at least one), so that what is queued while an answer is
/// awaited goes out with the next write.
final class PipeLoop {
    private let pipe: RedisPipe
    private var connection: RedisConnection?
    /// Where the requests go once a cluster said the slot lives there; nil: the endpoint.
    private var node: RedisEndpoint?
    private var digests: [String: String]
    /// Sent, in order, not yet answered.
    private var onTheWire: [RedisPipe.Entry] = []
    private var head = 0
    /// Taken from the queue (or to be sent again), not yet written.
    private var toSend: [RedisPipe.Entry] = []
    private var pause: UInt32 = 5_000

    init(pipe: RedisPipe, connection: RedisConnection, digests: [String: String]) {
        self.pipe = pipe
        self.connection = connection
        self.digests = digests
    }

    func run() {
        // The thread's own: a write to a server that has gone is EPIPE, never a signal.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        while true {
            guard let taken = pipe.take(idle: toSend.isEmpty && head == onTheWire.count) else { break }
            toSend += taken
            do {
                try send()
                try read()
            } catch {
                failed(error)
            }
        }
        connection = nil
    }

    /// Writes every request not yet sent, in one write.
    private func send() throws(RedisFailure) {
        guard !toSend.isEmpty else { return }
        let c = try open()
        for entry in toSend {
            switch entry.request.body {
            case .command(let arguments):
                try c.append(arguments)
            case .script(let script, let keys, let arguments):
                if !entry.bySource, let digest = digests[script.name] {
                    try c.append(["EVALSHA", digest, String(keys.count)] + keys + arguments)
                } else {
                    try c.append(["EVAL", script.source, String(keys.count)] + keys + arguments)
                }
            }
        }
        if head > 256, head * 2 > onTheWire.count {
            onTheWire.removeFirst(head)
            head = 0
        }
        onTheWire += toSend
        toSend.removeAll(keepingCapacity: true)
        try c.flush()
    }

    /// Reads one answer (waiting for it), then every other one already received.
    private func read() throws(RedisFailure) {
        guard head < onTheWire.count, let c = connection else { return }
        var reply: RedisReply? = try c.read()
        while let answer = reply {
            try received(answer)
            guard head < onTheWire.count else { return }
            reply = try c.buffered()
        }
    }

    /// The answer to the oldest request on the wire.
    private func received(_ reply: RedisReply) throws(RedisFailure) {
        let entry = onTheWire[head]
        if case .error(let text) = reply {
            let failure = RedisFailure.server(text)
            if text.hasPrefix("NOSCRIPT") {
                // The server lost its script cache (restarted, flushed): the script goes by
                // its source, which loads it again.
                onTheWire[head].bySource = true
                throw failure
            }
            if failure.isTransient || ClusterRedirect(text) != nil { throw failure }
        }
        head += 1
        pause = 5_000
        pipe.answer(entry.index, of: entry.ticket, .success(reply))
    }

    /// Everything on the wire goes back, ahead of what was not sent yet, to be sent again on
    /// a new connection; a request whose patience is spent fails with `failure`.
    private func failed(_ failure: RedisFailure) {
        connection = nil
        let redirect = ClusterRedirect(failure)
        var again = Array(onTheWire[head...]).map(pipe.renumberedOnResend) + toSend
        onTheWire.removeAll(keepingCapacity: true)
        head = 0
        if let redirect, redirect.kind == .moved {
            node = pipe.endpoint.at(redirect.address)
            again[0].redirects += 1
        } else if failure.isConnection {
            // A node the slot moved to may be gone (a master killed, its replica promoted):
            // the endpoint, the seed, is asked again and redirects.
            node = nil
        } else if case .server(let text) = failure, text.hasPrefix("NOSCRIPT") {
            digests = [:]
        }
        let now = SystemClocks.monotonic()
        let limit = UInt64(pipe.patience.nanoseconds)
        toSend = again.filter { entry in
            let spent = now - entry.submitted >= limit || entry.redirects > 5 || !failure.isResendable
            if spent { pipe.answer(entry.index, of: entry.ticket, .failure(failure)) }
            return !spent
        }
        // A redirect or a lost script cache is sent again at once; the rest wait a little longer each time.
        guard !toSend.isEmpty, failure.isConnection || failure.isTransient else { return }
        usleep(pause)
        pause = min(pause * 2, 100_000)
    }

    /// The open connection, or a new one: at most a second to connect, so that attempts fit in a
    /// second's patience.
    private func open() throws(RedisFailure) -> RedisConnection {
        if let connection, connection.isOpen { return connection }
        let target = node ?? pipe.endpoint
        let made = try RedisConnection(target, timeout: min(target.connectTimeout, .seconds(1)))
        connection = made
        return made
    }
}

extension RedisFailure {
    /// Whether sending again may be answered: a connection's failure, or the server's
    /// transient one, a redirect, a lost script cache.
    var isResendable: Bool {
        switch self {
        case .connection: true
        case .server(let text): isTransient || ClusterRedirect(text) != nil || text.hasPrefix("NOSCRIPT")
        }
    }
}
#endif
