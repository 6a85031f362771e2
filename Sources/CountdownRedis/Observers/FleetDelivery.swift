#if Redis
import Countdown

/// What the registry decides to tell an observer, delivered on the delivery queue in the order
/// decided.
enum FleetDelivery {
    /// A tick, delivered only if the observer's gate still reads `epoch`.
    case tick(FleetObserver, epoch: UInt64, CountdownEvent)
    /// The first tick of a call's observer, told as the call answered it: always delivered
    /// (the contract's first tick comes at once, whatever lands before the queue runs).
    case told(FleetObserver, CountdownEvent)
    /// The finish: decided once, after the countdown left the registry, so always delivered.
    case finish(FleetObserver, CountdownEvent)
    /// The observer hears nothing more (cancelled, replaced, shut down): its stream ends.
    case end(FleetObserver)
}

/// Everything one decision of the registry asks for, carried out in this order by
/// ``LocalWatch``: gates moved (under the lock), ticks filed, deliveries queued.
struct FleetDecisions {
    var gates: [(FleetObserver, UInt64)] = []
    var ticks: [(instant: Int64, generation: Int64)] = []
    var deliveries: [FleetDelivery] = []
}
#endif
