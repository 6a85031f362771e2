#if Redis
/// What the registry decided to tell observers, in the order decided, until the delivery queue
/// takes it: the first decision after a take asks for a drain; a drain delivers a tick only if
/// its observer's gate still reads the epoch it was decided in (a pause, a replacement or a
/// cancel decided meanwhile moved it), with no lock held.
struct FleetOutbox {
    private var pending: [FleetDelivery] = []
    private var drainQueued = false

    /// Adds `deliveries`; whether a drain must be queued (none is yet).
    mutating func add(_ deliveries: [FleetDelivery]) -> Bool {
        pending.append(contentsOf: deliveries)
        guard !pending.isEmpty, !drainQueued else { return false }
        drainQueued = true
        return true
    }

    /// Everything pending, for the drain that runs now.
    mutating func take() -> [FleetDelivery] {
        drainQueued = false
        defer { pending = [] }
        return pending
    }

    /// On the delivery queue: delivers `batch` in order.
    static func deliver(_ batch: [FleetDelivery]) {
        for delivery in batch {
            switch delivery {
            case .tick(let observer, let epoch, let event):
                if observer.epoch == epoch { observer.observer(event) }
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
#endif
