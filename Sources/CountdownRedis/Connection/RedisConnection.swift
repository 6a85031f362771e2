#if Redis
import CHiredis
import CountdownSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One blocking hiredis connection. Not thread-safe: one thread, or a lock, at a time.
final class RedisConnection {
    let endpoint: RedisEndpoint
    private var context: UnsafeMutablePointer<redisContext>?

    /// Connects within `timeout` (the endpoint's connect timeout by default), turns TCP
    /// keepalive on, authenticates and selects the database as the endpoint says; later calls
    /// wait at most `commandTimeout` for an answer (the endpoint's by default; nil: as long as
    /// it takes, for a blocking read). A wrong password or a refused `SELECT` is the server's
    /// error, thrown as it answered.
    init(_ endpoint: RedisEndpoint, timeout: Duration? = nil, commandTimeout: CommandTimeout = .endpoint) throws(RedisFailure) {
        self.endpoint = endpoint
        errno = 0
        let connectTimeout = timeval(timeout ?? endpoint.connectTimeout)
        let made: UnsafeMutablePointer<redisContext>?
        switch endpoint.address {
        case .tcp(let host, let port): made = redisConnectWithTimeout(host, Int32(port), connectTimeout)
        case .unix(let path): made = redisConnectUnixWithTimeout(path, connectTimeout)
        }
        guard let context = made else { throw .connection(.refused, "\(endpoint): could not allocate a connection") }
        if context.pointee.err != 0 {
            let failure = Self.failure(context, errno: errno, endpoint: endpoint)
            redisFree(context)
            throw failure
        }
        self.context = context
        if case .tcp = endpoint.address, let interval = endpoint.keepAlive { Self.keepAlive(context.pointee.fd, interval) }
        // The handshake waits no longer than a command; a silent server is a timeout here.
        try setTimeout(endpoint.commandTimeout)
        try handshake()
        switch commandTimeout {
        case .endpoint: break
        case .blocking: try setTimeout(nil)
        case .custom(let duration): try setTimeout(duration)
        }
    }

    /// How long a connection's calls wait for their answers.
    enum CommandTimeout {
        /// The endpoint's ``RedisEndpoint/commandTimeout``.
        case endpoint
        /// As long as it takes: a blocking read (a subscriber's, a blocking pop's).
        case blocking
        /// This long.
        case custom(Duration)
    }

    /// `AUTH` and `SELECT`, as the endpoint says, before anything else on this connection; a
    /// `PING` when it says neither, so that a server that wants a password says so here (an
    /// error of the caller's `init`, not of its first call). The server's error comes first in
    /// the text (its code, `WRONGPASS`, `NOAUTH`, classifies it); the command is never part of
    /// it: its arguments hold the password.
    private func handshake() throws(RedisFailure) {
        if let password = endpoint.password {
            let auth = endpoint.username.map { ["AUTH", $0, password] } ?? ["AUTH", password]
            if case .error(let text) = try call(auth) { throw .server("\(text) (AUTH at \(endpoint))") }
        }
        if endpoint.database != 0, case .error(let text) = try call(["SELECT", String(endpoint.database)]) {
            throw .server("\(text) (SELECT \(endpoint.database) at \(endpoint))")
        }
        if endpoint.password == nil, endpoint.database == 0, case .error(let text) = try call(["PING"]) {
            throw .server("\(text) (PING at \(endpoint))")
        }
    }

    /// TCP keepalive on the socket: the first probe after `interval` idle, then every third
    /// of it, three unanswered probes and the connection is reset (and made again).
    private static func keepAlive(_ fd: Int32, _ interval: Duration) {
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, socklen_t(MemoryLayout<Int32>.size))
        var idle = Int32(max(interval.components.seconds, 1)), every = max(idle / 3, 1), count: Int32 = 3
        #if os(Linux)
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPIDLE, &idle, socklen_t(MemoryLayout<Int32>.size))
        #elseif canImport(Darwin)
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPALIVE, &idle, socklen_t(MemoryLayout<Int32>.size))
        #endif
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPINTVL, &every, socklen_t(MemoryLayout<Int32>.size))
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPCNT, &count, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { if let context { redisFree(context) } }

    /// How long a read waits for the server's answer before the call fails (nil: as long as it takes).
    func setTimeout(_ timeout: Duration?) throws(RedisFailure) {
        guard let context else { throw .connection(.reset, "\(endpoint): closed") }
        guard redisSetTimeout(context, timeout.map(timeval) ?? timeval()) == REDIS_OK else { throw failure(context) }
    }

    /// Sends one command and waits for its reply.
    func call(_ arguments: [String]) throws(RedisFailure) -> RedisReply {
        try append(arguments)
        return try withoutSIGPIPE { () throws(RedisFailure) in try read() }
    }

    /// Sends every command in one write, then reads their replies in order (a pipeline): one
    /// round trip for the lot.
    func pipeline(_ commands: [[String]]) throws(RedisFailure) -> [RedisReply] {
        for command in commands { try append(command) }
        return try withoutSIGPIPE { () throws(RedisFailure) -> [RedisReply] in
            var replies: [RedisReply] = []
            replies.reserveCapacity(commands.count)
            for _ in commands { replies.append(try read()) }
            return replies
        }
    }

    /// Queues a command in hiredis' output buffer; written by the next read.
    func append(_ arguments: [String]) throws(RedisFailure) {
        guard let context else { throw .connection(.reset, "\(endpoint): closed") }
        let status = Self.withArgv(arguments) { argc, argv, lengths in
            redisAppendCommandArgv(context, argc, argv, lengths)
        }
        guard status == REDIS_OK else { throw failure(context) }
    }

    /// Writes commands already in Redis' protocol (``RESPWriter``) to the socket, all of them,
    /// with nothing queued in hiredis' own buffer (so that a read writes nothing). On Linux
    /// `MSG_NOSIGNAL`: a peer gone is EPIPE, never SIGPIPE, and no signal mask is changed
    /// around it (four system calls a call, which a pipe driven by its caller paid each time).
    func send(formatted bytes: [UInt8]) throws(RedisFailure) {
        guard let context else { throw .connection(.reset, "\(endpoint): closed") }
        #if os(Linux)
        let fd = context.pointee.fd
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if count >= 0 {
                sent += count
                continue
            }
            let number = errno
            if number == EINTR { continue }
            let failure = RedisFailure.connection(hiredisError: 1, errno: number, text: "\(endpoint): \(String(cString: strerror(number)))")
            redisFree(context)
            self.context = nil
            throw failure
        }
        #else
        let status = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { redisAppendFormattedCommand(context, $0.baseAddress, $0.count) }
        }
        guard status == REDIS_OK else { throw failure(context) }
        try withoutSIGPIPE { () throws(RedisFailure) in try flush() }
        #endif
    }

    /// Writes what is queued now, without waiting for a reply, so that it reaches the server
    /// while the caller reads and works on earlier replies (a read writes only when it finds no
    /// reply already received). Call it inside ``withoutSIGPIPE``, as ``read()``.
    func flush() throws(RedisFailure) {
        guard let context else { throw .connection(.reset, "\(endpoint): closed") }
        var done: Int32 = 0
        while done == 0 {
            errno = 0
            guard redisBufferWrite(context, &done) == REDIS_OK else { throw failure(context, errno: errno) }
        }
    }

    /// Writes what is queued, then reads one reply. hiredis writes with write(2): a peer that
    /// has gone raises SIGPIPE, which would end the process. Call it inside ``withoutSIGPIPE``
    /// (as ``call(_:)`` and ``pipeline(_:)`` do, once for a whole batch): there it is EPIPE, a
    /// failure like any other.
    func read() throws(RedisFailure) -> RedisReply {
        guard let context else { throw .connection(.reset, "\(endpoint): closed") }
        var raw: UnsafeMutableRawPointer?
        errno = 0
        let status = redisGetReply(context, &raw)
        let number = errno
        guard status == REDIS_OK, let raw else { throw failure(context, errno: number) }
        defer { freeReplyObject(raw) }
        return Self.copy(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// A reply already received and buffered, or nil (without reading from the socket): what a
    /// pipelined reader takes after the reply it waited for, before it waits again.
    func buffered() throws(RedisFailure) -> RedisReply? {
        guard let context else { throw .connection(.reset, "\(endpoint): closed") }
        var raw: UnsafeMutableRawPointer?
        guard redisGetReplyFromReader(context, &raw) == REDIS_OK else { throw failure(context) }
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        return Self.copy(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// A failed call leaves the connection unusable: it is closed, and the error says why.
    private func failure(_ context: UnsafeMutablePointer<redisContext>, errno number: Int32 = errno) -> RedisFailure {
        let failure = Self.failure(context, errno: number, endpoint: endpoint)
        redisFree(context)
        self.context = nil
        return failure
    }

    /// What hiredis reports for `context`, classified; `number` is errno as read right after
    /// the failing call.
    private static func failure(_ context: UnsafeMutablePointer<redisContext>, errno number: Int32, endpoint: RedisEndpoint) -> RedisFailure {
        let text = errorText(context)
        return .connection(hiredisError: context.pointee.err, errno: number, text: "\(endpoint): \(text.isEmpty ? "closed" : text)")
    }

    var isOpen: Bool { context != nil }

    /// The next reply the server pushes (a subscriber's message), or nil when none came within
    /// `timeout`: the connection stays usable (a read timeout would close it).
    func nextPushed(within timeout: Duration) throws(RedisFailure) -> RedisReply? {
        guard let context else { throw .connection(.reset, "\(endpoint): closed") }
        var raw: UnsafeMutableRawPointer?
        guard redisGetReplyFromReader(context, &raw) == REDIS_OK else { throw failure(context) }
        if raw == nil {
            var descriptor = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(timeout.nanoseconds / 1_000_000))
            guard ready > 0 else { return nil }
            guard redisBufferRead(context) == REDIS_OK, redisGetReplyFromReader(context, &raw) == REDIS_OK else {
                throw failure(context)
            }
            guard raw != nil else { return nil }
        }
        defer { freeReplyObject(raw) }
        return Self.copy(raw!.assumingMemoryBound(to: redisReply.self))
    }

    private static func copy(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let r = reply.pointee
        func text() -> String {
            guard let str = r.str else { return "" }
            return String(decoding: UnsafeRawBufferPointer(start: str, count: Int(r.len)), as: UTF8.self)
        }
        switch r.type {
        case REDIS_REPLY_STATUS: return .status(text())
        case REDIS_REPLY_ERROR: return .error(text())
        case REDIS_REPLY_INTEGER: return .integer(r.integer)
        case REDIS_REPLY_STRING: return .string(text())
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(Int(r.elements))
            for index in 0..<Int(r.elements) {
                if let element = r.element[index] { elements.append(copy(element)) } else { elements.append(.null) }
            }
            return .array(elements)
        default: return .null
        }
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { bytes in
            String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    /// The arguments as hiredis takes them: pointers and lengths, so that any byte (a NUL too)
    /// passes through.
    private static func withArgv<R>(
        _ arguments: [String], _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> R
    ) -> R {
        var bytes: [UInt8] = []
        var offsets: [Int] = []
        var lengths: [Int] = []
        for argument in arguments {
            offsets.append(bytes.count)
            bytes.append(contentsOf: argument.utf8)
            lengths.append(bytes.count - offsets.last!)
        }
        if bytes.isEmpty { bytes.append(0) }
        return bytes.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            var argv: [UnsafePointer<CChar>?] = offsets.map { base + $0 }
            return argv.withUnsafeMutableBufferPointer { argvBuffer in
                lengths.withUnsafeBufferPointer { lengthBuffer in
                    body(Int32(arguments.count), argvBuffer.baseAddress!, lengthBuffer.baseAddress!)
                }
            }
        }
    }
}

private func timeval(_ duration: Duration) -> timeval {
    let (seconds, attoseconds) = duration.components
    var value = timeval()
    value.tv_sec = numericCast(seconds)
    value.tv_usec = numericCast(attoseconds / 1_000_000_000_000)
    return value
}
#endif
