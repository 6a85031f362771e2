import CountdownSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
private typealias SocketLinger = Glibc.linger
private let connectSocket = Glibc.connect
private let noSignal = Int32(MSG_NOSIGNAL)
private let streamSocket = Int32(SOCK_STREAM.rawValue)
#elseif canImport(Darwin)
import Darwin
private typealias SocketLinger = Darwin.linger
private let connectSocket = Darwin.connect
private let noSignal: Int32 = 0  // Darwin: SO_NOSIGPIPE is set on each socket instead
private let streamSocket = SOCK_STREAM
#endif

/// A loopback TCP proxy in front of a fleet's shared store, owned by the suite, that injects the
/// faults a network and a restarting server inject: a connection closed right after the server
/// answered and before the client read the answer (the answer is lost, the call was made), a
/// connection reset, every byte held back a while. It knows nothing of the protocol: a request
/// is whatever the client sent since the last answer, an answer whatever the server sent back.
///
/// ```swift
/// let proxy = try FaultProxy(upstream: "127.0.0.1:6379")
/// proxy.inject(.dropAnswers(probability: 0.05))     // connect your client to proxy.address
/// ```
public final class FaultProxy: Sendable {
    private struct Settings {
        var fault: Fault?
        /// Each answer held a time drawn up to this: what travels on two connections arrives in
        /// either order.
        var latency: Duration = .zero
        /// Requests hit once (``Fault/onlyTheFirstTime``), by their bytes.
        var hitOnce: Set<[UInt8]> = []
        var delay: Duration = .zero
        var resets = 0
        var stopped = false
    }

    /// Where it passes every connection on: the store's `host:port`.
    public let upstream: String
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    private let listener: Int32
    private let settings = Locked(Settings())
    private let accepted = Atomic<Int>(0)
    private let injected = Atomic<Int>(0)

    /// Listens on a free loopback port, passing every connection on to `upstream` (`host:port`).
    public init(upstream: String) throws {
        guard let colon = upstream.lastIndex(of: ":"), let upstreamPort = Int(upstream[upstream.index(after: colon)...]) else {
            throw ProxyError("the upstream must be HOST:PORT, not \(upstream)")
        }
        self.upstream = upstream
        let host = String(upstream[..<colon]).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let listener = socket(AF_INET, streamSocket, 0)
        self.listener = listener
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0 }
        }
        guard bound, listen(listener, 128) == 0 else {
            close(listener)
            throw ProxyError("cannot listen on a loopback port: \(String(cString: strerror(errno)))")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in
            nameCurrentThread("conformance-proxy")
            acceptLoop(host: host, port: upstreamPort)
        }
        thread.start()
    }

    deinit { stop() }

    /// Where the client connects: `127.0.0.1:<port>`.
    public var address: String { "127.0.0.1:\(port)" }

    /// Hits answers with `fault` from now on (nil: none).
    public func inject(_ fault: Fault?) { settings.withLock { $0.fault = fault } }

    /// Holds every chunk, both ways, `duration` before passing it on (zero: none).
    public func delay(_ duration: Duration) { settings.withLock { $0.delay = duration } }

    /// Holds every answer a time drawn anew up to `most` (zero: none) before passing it on;
    /// requests pass at once, so calls are not slowed more than a busy server would slow them.
    /// Each connection keeps its order, but an answer on one and a message on another arrive in
    /// either order, as over a network whose paths and queues differ.
    public func latency(upTo most: Duration) { settings.withLock { $0.latency = most } }

    /// Resets every connection open now, as a network blip or a restarted server would.
    public func resetAll() { settings.withLock { $0.resets += 1 } }

    /// Connections accepted so far: zero means the client never came through the proxy.
    public var connections: Int { accepted.load(ordering: .relaxed) }

    /// Answers dropped or reset so far, and connections reset by ``resetAll()``.
    public var faults: Int { injected.load(ordering: .relaxed) }

    /// Stops listening and closes every connection.
    public func stop() {
        let first = settings.withLock { s -> Bool in
            defer { s.stopped = true }
            return !s.stopped
        }
        if first { shutdown(listener, Int32(SHUT_RDWR)) }
    }

    /// Why the proxy could not listen or reach its upstream.
    public struct ProxyError: Error, CustomStringConvertible {
        /// What went wrong, in one line.
        public let description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: Connections

    private func acceptLoop(host: String, port: Int) {
        defer { close(listener) }
        while !settings.withLock({ $0.stopped }) {
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 50) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            accepted.add(1, ordering: .relaxed)
            var one: Int32 = 1
            setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            Self.noSIGPIPE(client)
            guard let server = Self.connect(host: host, port: port) else {
                close(client)
                continue
            }
            let thread = Thread { [self] in
                nameCurrentThread("conformance-proxy")
                relay(client: client, server: server)
            }
            thread.start()
        }
    }

    /// Passes bytes both ways until either side closes, the proxy stops, or a fault hits.
    private func relay(client: Int32, server: Int32) {
        var resetsSeen = settings.withLock { $0.resets }
        var armed: Fault.Action?
        var untilHit: Int?
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        func end(reset: Bool) {
            if reset {
                var linger = SocketLinger(l_onoff: 1, l_linger: 0)
                setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<SocketLinger>.size))
            }
            close(client)
            close(server)
        }
        while true {
            let now = settings.withLock { ($0.stopped, $0.resets, $0.fault, $0.delay, $0.latency) }
            if now.0 { return end(reset: false) }
            if now.1 != resetsSeen {
                resetsSeen = now.1
                injected.add(1, ordering: .relaxed)
                return end(reset: true)
            }
            var fds = [pollfd(fd: client, events: Int16(POLLIN), revents: 0), pollfd(fd: server, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, 20) > 0 else { continue }
            for (index, fd) in [(0, client), (1, server)] where fds[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count <= 0 { return end(reset: false) }
                if now.3 > .zero { Thread.sleep(forTimeInterval: Double(now.3.nanoseconds) / 1e9) }
                if index == 0 {
                    // A request: decide now whether its answer is hit.
                    if let fault = now.2, fault.requestContaining.map({ Self.contains(buffer[..<count], $0) }) ?? true {
                        if fault.hits(&untilHit), !fault.onlyTheFirstTime || firstTime(Array(buffer[..<count])) { armed = fault.action }
                    }
                    guard Self.writeAll(server, buffer[..<count]) else { return end(reset: false) }
                } else {
                    let held = Self.random(below: now.4)
                    if held > 0 { Thread.sleep(forTimeInterval: Double(held) / 1e9) }
                    if let action = armed {
                        injected.add(1, ordering: .relaxed)
                        return end(reset: action == .reset)
                    }
                    guard Self.writeAll(client, buffer[..<count]) else { return end(reset: false) }
                }
            }
        }
    }

    private static func random(below most: Duration) -> Int64 {
        most > .zero ? Int64.random(in: 0..<most.nanoseconds) : 0
    }

    /// Whether `request` was never hit before (and is now).
    private func firstTime(_ request: [UInt8]) -> Bool {
        settings.withLock { $0.hitOnce.insert(request).inserted }
    }

    /// Darwin has no `MSG_NOSIGNAL`: the socket says it instead.
    private static func noSIGPIPE(_ fd: Int32) {
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    private static func contains(_ bytes: ArraySlice<UInt8>, _ marker: String) -> Bool {
        let needle = Array(marker.utf8)
        guard !needle.isEmpty, bytes.count >= needle.count else { return needle.isEmpty }
        var index = bytes.startIndex
        while index + needle.count <= bytes.endIndex {
            if bytes[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }

    private static func writeAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            // Never SIGPIPE: a client that has gone is a closed connection here, not the end of the suite.
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, noSignal) }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    private static func connect(host: String, port: Int) -> Int32? {
        var hints = addrinfo()
        hints.ai_socktype = streamSocket
        var found: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &found) == 0, let first = found else { return nil }
        defer { freeaddrinfo(found) }
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let candidate = entry {
            let fd = socket(candidate.pointee.ai_family, candidate.pointee.ai_socktype, candidate.pointee.ai_protocol)
            if fd >= 0 {
                if connectSocket(fd, candidate.pointee.ai_addr, candidate.pointee.ai_addrlen) == 0 {
                    var one: Int32 = 1
                    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                    noSIGPIPE(fd)
                    return fd
                }
                close(fd)
            }
            entry = candidate.pointee.ai_next
        }
        return nil
    }
}
