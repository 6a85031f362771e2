import CountdownConformance

extension CountdownBackend.Options {
    /// What the conformance suite hands a factory, as a backend's options: the one mapping from
    /// the suite's environment to a backend (its tick, queue and movable wall clock; a fleet
    /// backend's namespace and store address), which `countdown-bench conformance` and the
    /// package's tests both use.
    public init(_ environment: CountdownConformance.Environment) {
        self.init(
            tickInterval: environment.tickInterval, deliveryQueue: environment.deliveryQueue, wallClock: environment.wallClock,
            namespace: environment.namespace, storeAddress: environment.storeAddress)
    }
}
