#if Redis
import CountdownSupport
import Dispatch
import Foundation

/// One connection to Redis shared by every caller at once: what callers submit while earlier
/// requests are on their way goes out together in the next write (auto-pipelining, as Lettuce
/// and ioredis do), and the answers come back in order. Its own thread (``PipeLoop``) writes,
/// reads and sends again; callers only queue a request and wait for its ``PipeTicket``: a task
/// suspends, a thread blocks, and no thread of the cooperative pool ever waits on the network.
///
/// In flight is bounded: at most `bound` requests submitted and not yet answered. Past it, a
/// caller waits (a task suspends, a thread blocks) before its request is queued, so the queue
/// never grows past the bound. The bound is ``mostInFlight`` at most, and for recorded scripts
/// at most a quarter of the ring (``CallRecord``), so that a record is reused only long after
/// its call was answered.
///
/// A connection that breaks, times out or is redirected (`MOVED`), or a transient error
/// (`LOADING`, `BUSY`, `TRYAGAIN`, `CLUSTERDOWN`, `ASK`), sends again, on a new connection,
/// every request not yet answered, in order, each with the arguments it first had (a recorded
/// script its serial): each is answered as the first time. A request that cannot be answered
/// within `patience` of its submission fails with the last failure.
final class RedisPipe: Sendable {
    typealias Request = PipeRequest

    /// A request queued, with where its answer goes.
    struct Entry: Sendable {
        var request: Request
        let ticket: PipeTicket
        let index: Int
        /// Monotonic nanoseconds when it was submitted: its patience runs from there.
        let submitted: UInt64
    }

    private enum Waiter {
        case task(CheckedContinuation<Void, Never>)
        case thread(DispatchSemaphore)
    }

    private struct Shared {
        var queue: [Entry] = []
        var free: Int
        var waiting: [(count: Int, waiter: Waiter)] = []
        var nextSerial: Int64 = 1
        var idle = false
        /// A caller that drove left calls on the wire: the pipe's thread must read their answers.
        var handedOver = false
        var stopped = false
    }

    let endpoint: RedisEndpoint
    /// The name this pipe's recorded calls are kept under: `<member>:<role>`.
    let client: String
    /// How many answers the server keeps for this client (``CallRecord``).
    let ring: Int
    /// The most requests submitted and not yet answered.
    let bound: Int

    /// The most requests a pipe has on their way, whatever its ring. Every answer that comes
    /// back resumes its caller, and a task resumed waits its turn on the cooperative pool behind
    /// every other resumed at once: with 256 on their way, a task sleeping 5 ms beside 256
    /// callers woke 2.4-8.3 ms late at p99 (8 runs of `countdown-bench fleet --parts 5 --tasks
    /// 256`), with 64 1.0-4.4 ms (median 1.9 ms), for calls a second 31 700-59 500 (median
    /// 44 000) against 41 400-77 400 (median 62 000): fewer calls merged a script. A server's
    /// other requests are what wait on that pool; they come first.
    static let mostInFlight = 64
    let patience: Duration
    /// Where the pipe goes when its node fails, on a cluster (nil: back to the endpoint).
    let route: ClusterRoute?
    private let shared: Locked<Shared>
    private let wake = DispatchSemaphore(value: 0)
    private let newSerialOnResend: Bool
    /// Whoever drives the connection (writes what is queued, reads answers) holds this: the
    /// pipe's thread, or a blocking caller that found it free (``wait(_:)``).
    private let driver: Locked<PipeLoop?>

    /// Connects at once (on the calling thread), so that an unreachable server is an error of
    /// the caller's `init`; then starts the pipe's thread, named `name`.
    init(
        _ endpoint: RedisEndpoint, client: String, name: String, ring: Int = 1024, patience: Duration = .seconds(1),
        preload scripts: [RedisScript] = [], route: ClusterRoute? = nil, defects: FleetDefects = []
    ) throws(RedisFailure) {
        self.route = route
        self.endpoint = endpoint
        self.client = client
        self.ring = max(ring, 4)
        bound = min(self.ring / 4, Self.mostInFlight)
        self.patience = patience
        newSerialOnResend = defects.contains(.newSerialOnResend)
        shared = Locked(Shared(free: bound))
        let (connection, node) = try ClusterRoute.connect(endpoint, route)
        var digests: [String: String] = [:]
        for script in scripts {
            guard case .string(let digest) = try connection.call(["SCRIPT", "LOAD", script.source]) else {
                throw .server("SCRIPT LOAD \(script.name) was refused")
            }
            digests[script.name] = digest
        }
        // From here on the connection is used only by whoever holds the driver.
        driver = Locked(PipeLoop(connection: connection, node: node, digests: digests))
        Thread { [self] in
            nameCurrentThread(name)
            PipeLoop.blockSIGPIPE()
            while true {
                let stopped = driver.withLock { $0!.drive(self) { false } }
                if stopped { break }
                waitForWork()
            }
            driver.withLock { $0 = nil }
        }.start()
    }

    /// The answers of `ticket`, for a thread that may block (not the cooperative pool's): when
    /// nobody drives the connection, this thread does, writing what is queued and reading until
    /// its own answers came (no other thread woken on the way: what one call at a time costs
    /// is a round trip, as on a connection of its own); else the driver answers it.
    func wait(_ ticket: PipeTicket) -> PipeTicket.Answers {
        let leftOnTheWire = driver.withLockIfAvailable { loop -> Bool in
            guard let loop else { return false }
            // Its writes raise no SIGPIPE (``RedisConnection/send(formatted:)``), and its reads write nothing.
            _ = loop.drive(self) { ticket.isComplete }
            return loop.isBusy
        }
        // What is left on the wire, or queued meanwhile, is the pipe thread's to drive.
        wakeIfIdle(handingOver: leftOnTheWire == true)
        return ticket.wait()
    }

    /// How many requests are submitted and not yet answered (never more than ``bound``).
    var inFlight: Int { bound - shared.withLock { $0.free } }

    /// How many callers wait for a place in flight.
    var waitingCallers: Int { shared.withLock { $0.waiting.count } }

    // MARK: Submitting

    /// Queues `requests` together (adjacent on the wire), suspending while the bound is reached.
    func submit(_ requests: [Request]) async -> PipeTicket {
        let count = min(requests.count, bound)
        let admitted = shared.withLock { s -> Bool in
            guard s.waiting.isEmpty, s.free >= count else { return false }
            s.free -= count
            return true
        }
        if !admitted {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if !enlist(count, .task(continuation)) { continuation.resume() }
            }
        }
        return enqueue(requests)
    }

    /// Queues `requests` together, blocking the calling thread while the bound is reached.
    /// The pipe's thread is not woken: the caller drives, or wakes it (``wait(_:)``).
    func submitWaiting(_ requests: [Request]) -> PipeTicket {
        let count = min(requests.count, bound)
        let semaphore = DispatchSemaphore(value: 0)
        if enlist(count, .thread(semaphore)) { semaphore.wait() }
        return enqueue(requests, waking: false)
    }

    /// Takes `count` places now (false), or puts the caller in line for them (true).
    private func enlist(_ count: Int, _ waiter: Waiter) -> Bool {
        shared.withLock { s -> Bool in
            if s.waiting.isEmpty, s.free >= count {
                s.free -= count
                return false
            }
            s.waiting.append((count, waiter))
            return true
        }
    }

    private func enqueue(_ requests: [Request], waking: Bool = true) -> PipeTicket {
        precondition(requests.count <= bound, "more requests at once than may be in flight")
        let ticket = PipeTicket(count: requests.count)
        let now = SystemClocks.monotonic()
        let (signal, stopped) = shared.withLock { s -> (Bool, Bool) in
            guard !s.stopped else { return (false, true) }
            for (index, request) in requests.enumerated() {
                s.queue.append(Entry(request: numbered(request, &s.nextSerial), ticket: ticket, index: index, submitted: now))
            }
            guard waking else { return (false, false) }
            let signal = s.idle
            s.idle = false
            return (signal, false)
        }
        if stopped {
            for index in requests.indices { ticket.answer(index, .failure(.connection(.reset, "\(endpoint): closed (shut down)"))) }
            release(requests.count)
        } else if signal {
            wake.signal()
        }
        return ticket
    }

    /// A recorded script with this pipe's client name, its serial and the ring's size.
    private func numbered(_ request: Request, _ serial: inout Int64) -> Request {
        guard case .script(let script, let keys, let arguments) = request.body, script.recorded else { return request }
        defer { serial += 1 }
        return .script(script, keys: keys, arguments: [client, String(serial), String(ring)] + arguments, merging: request.merging)
    }

    // MARK: The pipe's thread

    /// Everything queued (taken), and whether the pipe was stopped.
    func takeQueued() -> (taken: [Entry], stopped: Bool) {
        shared.withLock { s in
            defer { s.queue.removeAll(keepingCapacity: true) }
            return (s.queue, s.stopped)
        }
    }

    /// The pipe's thread, with nothing to do, sleeps until something is queued (at once when
    /// something already is).
    private func waitForWork() {
        let sleep = shared.withLock { s -> Bool in
            defer { s.handedOver = false }
            guard s.queue.isEmpty, !s.handedOver, !s.stopped else { return false }
            s.idle = true
            return true
        }
        if sleep { wake.wait() }
    }

    /// Wakes the pipe's thread if it sleeps and something is queued, or calls were left on the
    /// wire (`handingOver`). Told under the lock its sleep is decided under, so that a thread
    /// about to sleep sees it: no answer is left unread.
    private func wakeIfIdle(handingOver: Bool) {
        let signal = shared.withLock { s -> Bool in
            if handingOver { s.handedOver = true }
            guard s.idle, s.handedOver || !s.queue.isEmpty else { return false }
            s.idle = false
            return true
        }
        if signal { wake.signal() }
    }

    /// `count` requests were answered: their places in flight go to whoever waits.
    func release(_ count: Int) {
        guard count > 0 else { return }
        let admitted = shared.withLock { s -> [Waiter] in
            s.free += count
            var admitted: [Waiter] = []
            while let first = s.waiting.first, first.count <= s.free {
                s.free -= first.count
                admitted.append(s.waiting.removeFirst().waiter)
            }
            return admitted
        }
        for waiter in admitted {
            switch waiter {
            case .task(let continuation): continuation.resume()
            case .thread(let semaphore): semaphore.signal()
            }
        }
    }

    /// A request sent again gets a new serial: a defect on purpose (``FleetDefects/newSerialOnResend``).
    func renumberedOnResend(_ request: Request) -> Request {
        guard newSerialOnResend, case .script(let script, let keys, let arguments) = request.body, script.recorded else {
            return request
        }
        let serial = shared.withLock { s -> Int64 in
            defer { s.nextSerial += 1 }
            return s.nextSerial
        }
        return .script(script, keys: keys, arguments: [client, String(serial)] + arguments.dropFirst(2), merging: request.merging)
    }

    /// Ends the thread once every request queued has been answered; later ones fail at once.
    func stop() {
        let signal = shared.withLock { s -> Bool in
            s.stopped = true
            defer { s.idle = false }
            return s.idle
        }
        if signal { wake.signal() }
    }
}
#endif
