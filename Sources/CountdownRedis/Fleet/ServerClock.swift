#if Redis
import Synchronization

/// The offset from this process's monotonic clock to the Redis server's, as last measured from
/// an answer that told the server's time: turns a deadline told by another member (µs of the
/// server's clock) into an instant here. Deadlines are the server's; this only places them.
final class ServerClock: Sendable {
    /// The server's clock minus the monotonic clock, in nanoseconds.
    private let offset = Atomic<Int64>(0)

    /// An answer told the server's time `serverNow` (µs) and was read at `receivedAt` (ns, monotonic).
    func update(serverNow: Int64, receivedAt: Int64) {
        offset.store(serverNow * 1000 - receivedAt, ordering: .relaxed)
    }

    /// A deadline on the server's clock (µs) as a monotonic instant here, from the last offset.
    func local(_ serverMicros: Int64) -> Int64 { serverMicros * 1000 - offset.load(ordering: .relaxed) }

    /// The same, from an answer that told the server's time as well.
    static func local(_ serverMicros: Int64, serverNow: Int64, receivedAt: Int64) -> Int64 {
        receivedAt + (serverMicros - serverNow) * 1000
    }
}
#endif
