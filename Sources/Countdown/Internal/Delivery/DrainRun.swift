/// One drain's decisions, as a value: whether it lingers in a dense stream, when it hands the
/// delivery queue back (its turn), and whether it still begins with a batch held for the store.
/// The engine runs what each call returns (``CountdownEngine/drain(lingering:continuing:)``);
/// the instants come from its runtime, so virtual time drives the same decisions.
package struct DrainRun: Equatable, Sendable {
    /// What the drain does next, after a batch was delivered.
    package enum Step: Equatable, Sendable {
        /// The drain is over, its batch kept for the next; `notingGap`: it ended for want of
        /// events, and its end is noted (a drain queued soon after is in a dense stream).
        case end(notingGap: Bool)
        /// Sleep until then to let events gather, then say whether any came (``gathered(_:now:)``).
        case gather(until: UInt64)
        /// Take what came meanwhile; the drain ends if nothing came and no drain is queued.
        /// `handingBack`: first queue the drain that goes on (whether it lingers) and hand the
        /// queue to it.
        case take(handingBack: Bool?)
        /// In a dense stream: take what came, trying the lock rather than waiting for it.
        case takeLingering
    }

    /// A drain queued within this long after the last one ended is in a dense stream of events
    /// (above 100 000 a second), and lingers: there, a wake-up of the delivery queue's thread
    /// per event costs more than one per gather.
    static var linger: UInt64 { 10_000 }

    /// How long a lingering drain's thread sleeps to let events gather before it looks for them
    /// again (Linux adds its timer slack, 50 µs by default): events in a dense stream are heard
    /// up to that much later. It sleeps, not spins: a spinning drain slowed the thread deciding
    /// the events by a tenth on average and up to twice in some runs (a million starts, two
    /// cores), and each look and each take pulls the pipeline's cache lines from that thread's
    /// core. One sleep, one wake-up, covers every event decided meanwhile.
    static var gather: UInt64 { 20_000 }

    /// How long a drain holds the delivery queue, between two batches, before it hands it back:
    /// it queues itself again and ends, so that whatever was queued behind it runs first (the
    /// ticker's wake-up, which waits for the queue; an app's own work on its main queue).
    /// Without it, a drain in a stream that stayed dense held every wake-up until the stream
    /// ended: ticks came the whole stream late (770 ms behind a second of starts and cancels).
    /// A turn costs one `async`: a microsecond or so every half millisecond. (A batch is
    /// delivered whole: a slow observer still delays what comes after it.)
    static var turn: UInt64 { 500_000 }

    let began: UInt64
    /// The mechanism lets a drain linger (``ArmingStyle/deliveryMayLinger``).
    let lingering: Bool
    /// Whether the stream is dense: it lingers only while it is.
    private(set) var dense: Bool
    /// The hold its first batch begins with, freed by the write it waited for; nil once a
    /// batch passed the store.
    private(set) var hold: DeliveryHold?
    /// It queued the drain that goes on: it ends after delivering what it took last.
    private(set) var handedBack = false

    init(began: UInt64, lingering: Bool, dense: Bool, hold: DeliveryHold?) {
        self.began = began
        self.lingering = lingering
        self.dense = dense
        self.hold = hold
    }

    /// A batch passed the store whole: no hold any more, and the drain may hand back at its turn.
    package mutating func passedStore() { hold = nil }

    /// A batch was delivered at `now`; `tookAnything`: it held events or first fires (first
    /// fires alone are something taken: the drain looks again).
    package mutating func delivered(tookAnything: Bool, now: UInt64) -> Step {
        if handedBack { return .end(notingGap: false) }
        if !tookAnything {
            guard lingering && dense else { return .end(notingGap: true) }
            return .gather(until: now &+ Self.gather)
        }
        return next(now: now)
    }

    /// The drain slept to let events gather; `anything`: a decision put something in the
    /// pipeline meanwhile. With nothing come, the stream is no longer dense, and the drain ends.
    package mutating func gathered(_ anything: Bool, now: UInt64) -> Step {
        if !anything { dense = false }
        return next(now: now)
    }

    private mutating func next(now: UInt64) -> Step {
        let staying = lingering && dense
        var handingBack: Bool?
        // Not while a batch waits for the store: the writer queues that drain again.
        if hold == nil && now &- began >= Self.turn {
            handingBack = staying
            handedBack = true
        }
        return staying && !handedBack ? .takeLingering : .take(handingBack: handingBack)
    }
}
