#if Redis
import Countdown
import Synchronization

/// An observer attached in this process to a countdown of the fleet, with what ends it when the
/// end is not a finish (an event stream's end), and its gate: a tick is delivered only if the
/// gate still reads the epoch the tick was decided in. The registry moves the gate (under its
/// lock) when the observer is paused, replaced or let go, so that what was already queued for
/// it is silenced without a lock on the delivery side.
final class FleetObserver: Sendable {
    let observer: CountdownObserver
    let onEnd: (@Sendable () -> Void)?
    private let gate = Atomic<UInt64>(0)

    init(_ observer: @escaping CountdownObserver, onEnd: (@Sendable () -> Void)? = nil) {
        self.observer = observer
        self.onEnd = onEnd
    }

    /// The epoch a tick decided now carries.
    var epoch: UInt64 { gate.load(ordering: .acquiring) }

    /// Moves the gate to `epoch`: ticks decided before it are not delivered.
    func close(to epoch: UInt64) { gate.store(epoch, ordering: .releasing) }
}
#endif
