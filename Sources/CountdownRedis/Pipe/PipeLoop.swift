#if Redis
import CountdownSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The work of a ``RedisPipe``'s thread, and its state, which no other thread touches: the
/// connection, where it goes (a cluster's `MOVED`), the scripts' digests and the calls on the
/// wire. Each turn writes everything callers queued since the last one in one write, then
/// reads the answers that have come (at least one), so that what is queued while an answer is
/// awaited goes out with the next write.
final class PipeLoop {
    /// One call on the wire: a request, or requests merged into one (``PipeRequest/Merging``).
    /// Once made, a call stays as it is, sent again whole with its serial: its record answers
    /// the same requests.
    private struct Call {
        var request: PipeRequest
        var entries: [RedisPipe.Entry]
        /// Sent as `EVAL` with its source: the server answered `NOSCRIPT` to its digest.
        var bySource = false
        /// How many `MOVED` it followed.
        var redirects = 0
    }

    /// The pipe driven, while ``drive(_:until:)`` runs (the pipe owns its loop: held only then).
    private var pipe: RedisPipe!
    private var connection: RedisConnection?
    /// Where the calls go once a cluster said the slot lives there; nil: the endpoint.
    private var node: RedisEndpoint?
    private var digests: [String: String]
    /// Sent, in order, not yet answered: `onTheWire[head...]`.
    private var onTheWire: [Call] = []
    private var head = 0
    /// Taken from the queue (or to be sent again), not yet written.
    private var toSend: [Call] = []
    private var pause: UInt32 = 5_000
    private var writer = RESPWriter()

    init(connection: RedisConnection, node: RedisEndpoint?, digests: [String: String]) {
        self.connection = connection
        self.node = node
        self.digests = digests
    }

    /// A write to a server that has gone is EPIPE, never a signal, on the pipe's own thread.
    static func blockSIGPIPE() {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    /// Whether calls wait to be written, or for their answers.
    var isBusy: Bool { !toSend.isEmpty || head < onTheWire.count }

    /// Turns until `done` says so, or nothing is queued or on the wire: whether the pipe was
    /// stopped (with nothing left). Each turn writes what was queued since the last in one
    /// write, then reads the answers that have come (waiting for one).
    func drive(_ pipe: RedisPipe, until done: () -> Bool) -> Bool {
        self.pipe = pipe
        defer { self.pipe = nil }
        while true {
            let (taken, stopped) = pipe.takeQueued()
            toSend += Self.calls(taken)
            if toSend.isEmpty, head == onTheWire.count {
                if stopped { connection = nil }
                return stopped
            }
            do {
                try send()
                try read()
            } catch {
                failed(error)
            }
            if done() { return false }
        }
    }

    /// Requests taken together, as calls: those that merge, merged, wherever they are among the
    /// others; and the `WAIT`s (``ReplicaWait``) last, the same ones as one: a `WAIT` moved later
    /// still waits for every write before it.
    ///
    /// Requests of different tickets were submitted by callers that had not seen each other's
    /// answers, so they may go in any order: a start joins the start call opened before it,
    /// across the cancels between them (tasks that each start then cancel alternate the two).
    /// A ticket's own requests keep their order: each goes into the call of the one before it
    /// or a later call.
    private static func calls(_ entries: [RedisPipe.Entry]) -> [Call] {
        var calls: [Call] = []
        var waits: [Call] = []
        /// The call each kind of mergeable request fills now, by ``PipeRequest/mergeKey``.
        var open: [PipeRequest.MergeKey: Int] = [:]
        var ticket: PipeTicket?
        var floor = 0
        for entry in entries {
            if entry.ticket !== ticket {
                ticket = entry.ticket
                floor = 0
            }
            if case .command(let arguments) = entry.request.body, arguments.first == "WAIT" {
                if let same = waits.firstIndex(where: { if case .command(arguments) = $0.request.body { true } else { false } }) {
                    waits[same].entries.append(entry)
                } else {
                    waits.append(Call(request: entry.request, entries: [entry]))
                }
                continue
            }
            let kind = entries.count > 1 ? entry.request.mergeKey : nil  // one alone merges with nothing
            if let kind, let index = open[kind], index >= floor {
                calls[index].request.append(entry.request)
                calls[index].entries.append(entry)
                if calls[index].entries.count >= entry.request.merging!.most { open[kind] = nil }
                floor = index
            } else {
                calls.append(Call(request: entry.request, entries: [entry]))
                floor = calls.count - 1
                if let kind, entry.request.merging!.most > 1 { open[kind] = floor }
            }
        }
        return calls + waits
    }

    /// Writes every call not yet sent, in one write.
    private func send() throws(RedisFailure) {
        guard !toSend.isEmpty else { return }
        let c = try open()
        writer.removeAll()
        for call in toSend {
            switch call.request.body {
            case .command(let arguments):
                writer.command(arguments)
            case .script(let script, let keys, let arguments):
                if !call.bySource, let digest = digests[script.name] {
                    writer.command(["EVALSHA", digest, String(keys.count)], keys, arguments)
                } else {
                    writer.command(["EVAL", script.source, String(keys.count)], keys, arguments)
                }
            }
        }
        try c.send(formatted: writer.bytes)
        if head > 256, head * 2 > onTheWire.count {
            onTheWire.removeFirst(head)
            head = 0
        }
        onTheWire += toSend
        toSend.removeAll(keepingCapacity: true)
    }

    /// Reads one answer (waiting for it), then every other one already received.
    private func read() throws(RedisFailure) {
        guard head < onTheWire.count, let c = connection else { return }
        // The places in flight of what was answered are given back once, after the lot.
        var answered = 0
        defer { pipe.release(answered) }
        var reply: RedisReply? = try c.read()
        while let answer = reply {
            answered += try received(answer)
            guard head < onTheWire.count else { return }
            reply = try c.buffered()
        }
    }

    /// The answer to the oldest call on the wire, handed to its requests: how many they were.
    private func received(_ reply: RedisReply) throws(RedisFailure) -> Int {
        let call = onTheWire[head]
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
        if call.entries.count == 1 {
            call.entries[0].ticket.answer(call.entries[0].index, .success(reply))
            return 1
        }
        let each: [RedisReply]? = if case .error = reply { nil } else { call.request.merging?.split(reply, call.entries.count) }
        for (position, entry) in call.entries.enumerated() {
            entry.ticket.answer(entry.index, .success(each?[position] ?? reply))
        }
        return call.entries.count
    }

    /// Every call on the wire goes back, ahead of what was not sent yet, to be sent again on
    /// a new connection; one whose patience is spent fails with `failure`.
    private func failed(_ failure: RedisFailure) {
        connection = nil
        let redirect = ClusterRedirect(failure)
        var again = onTheWire[head...].map { call in
            var call = call
            call.request = pipe.renumberedOnResend(call.request)
            return call
        } + toSend
        onTheWire.removeAll(keepingCapacity: true)
        head = 0
        if let redirect, redirect.kind == .moved, !again.isEmpty {
            node = pipe.endpoint.at(redirect.address)
            again[0].redirects += 1
        } else if failure.isConnection {
            // A node the slot moved to may be gone (a master killed, its replica promoted): on
            // a cluster the map, read again from any node that answers, says where the slot is
            // now; else the endpoint is asked again.
            node = pipe.route?.endpoint(after: (node ?? pipe.endpoint).address)
        } else if case .server(let text) = failure, text.hasPrefix("NOSCRIPT") {
            digests = [:]
        }
        let now = SystemClocks.monotonic()
        let limit = UInt64(pipe.patience.nanoseconds)
        var answered = 0
        toSend = again.filter { call in
            let first = call.entries.map(\.submitted).min() ?? now
            let spent = now - first >= limit || call.redirects > 5 || !failure.isResendable
            if spent {
                for entry in call.entries { entry.ticket.answer(entry.index, .failure(failure)) }
                answered += call.entries.count
            }
            return !spent
        }
        pipe.release(answered)
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
