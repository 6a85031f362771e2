/// What one shared one-shot timer is armed for, as a value: the ticker decides under its lock
/// when the timer must be armed again, and the thread that decided arms it after releasing the
/// lock, so no timer call is made with a lock held.
///
/// Two threads may decide one after the other and arm in the opposite order, the later
/// decision overwritten by the earlier one. Each decision is numbered; a thread that armed
/// reports back (``armed(_:)``), and one that finds a later decision armed before its own
/// arms again with what is decided now. The timer therefore ends up armed for the latest
/// decision, never for one that was superseded.
struct TimerArming {
    /// An instant to arm the timer for, numbered in the order decided.
    struct Arm: Equatable {
        let instant: MonotonicInstant
        fileprivate let number: UInt64
    }

    /// The instant the timer is (or is about to be) armed for; nil when it is not armed.
    private(set) var armedFor: MonotonicInstant?
    private var decided: UInt64 = 0
    /// The highest-numbered decision a thread has armed the timer with.
    private var armedNumber: UInt64 = 0

    /// An arm for `instant`, unless the timer is already armed for it or earlier.
    mutating func arm(ifEarlier instant: MonotonicInstant) -> Arm? {
        if let armedFor, armedFor <= instant { return nil }
        return decide(instant)
    }

    /// The timer fired: it is armed for nothing until the next arm.
    mutating func fired() {
        armedFor = nil
    }

    /// `arm` was handed to the timer. Returns the arm to hand it again when a later decision
    /// reached the timer first (it was overwritten by `arm`); nil when the timer holds the
    /// latest decision, or will once the thread that made a later one has armed.
    mutating func armed(_ arm: Arm) -> Arm? {
        guard arm.number < armedNumber else {
            armedNumber = arm.number
            return nil
        }
        // Nothing armed now (it fired meanwhile and found nothing left): the stale arm is
        // harmless, a fire finds nothing due and decides again.
        guard let armedFor else { return nil }
        return decide(armedFor)
    }

    private mutating func decide(_ instant: MonotonicInstant) -> Arm {
        decided += 1
        armedFor = instant
        return Arm(instant: instant, number: decided)
    }
}
