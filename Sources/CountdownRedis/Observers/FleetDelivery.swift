#if Redis
import Countdown
import CountdownSupport

/// What the registry decides to tell an observer, delivered on the delivery queue in the order
/// decided (through the engine's ``DeliveryPipeline``, which ``LocalWatch`` runs).
enum FleetDelivery: Sendable {
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

extension FleetDelivery {
    /// On the delivery queue: delivers `batch` in order, with no lock held; a tick only if its
    /// observer's gate still reads the epoch it was decided in (a pause, a replacement or a
    /// cancel decided meanwhile moved it) and `hearing`, the member's as the batch was taken,
    /// does not hold it now.
    static func deliver(_ batch: ContiguousArray<FleetDelivery>, hearing: InboxHearing = InboxHearing()) {
        for delivery in batch {
            switch delivery {
            case .tick(let observer, let epoch, let event):
                guard observer.epoch == epoch else { continue }
                if hearing.isDeaf, hearing.holds(event.key, now: Int64(SystemClocks.monotonic())) { continue }
                observer.observer(event)
            case .told(let observer, let event):
                observer.observer(event)
            case .finish(let observer, let event):
                observer.observer(event)
                observer.onEnd?()
            case .end(let observer):
                observer.onEnd?()
            }
        }
    }
}

/// Everything one decision of the registry asks for, carried out in this order by
/// ``LocalWatch``: gates moved (under the lock), ticks filed, deliveries queued.
struct FleetDecisions {
    var gates: [(FleetObserver, UInt64)] = []
    var ticks: [(instant: Int64, generation: Int64)] = []
    var deliveries: [FleetDelivery] = []
}
#endif
