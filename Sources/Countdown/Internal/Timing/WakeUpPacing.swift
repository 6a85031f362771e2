/// How soon the ticker may wake up again, as a value: at once in a sparse stream of due
/// instants; in a stream that has stayed dense, not within ``window`` of the last wake-up.
///
/// With a million countdowns spread over a 1 s tick an instant is due every microsecond, and a
/// timer armed for the next one fired as soon as a wake-up ended (then a dispatch timer, each
/// fire a wake-up of libdispatch's manager thread and of the queue's). Held ``window`` apart, each wake-up takes
/// what came due meanwhile (measured in the same hour, a million `timestamp(continuous)`
/// countdowns at 1 s ticks, spread: the process's wake-ups 47 000-53 000 -> 34 000-36 000 a
/// second, CPU per event 0.56-0.64 -> 0.53 µs, tick lateness p50 8-9 -> 41-42 µs). A stream of
/// a few milliseconds (10 000 countdowns started at once, ticking together) saves a few
/// wake-ups and would pay the lateness on every event, so the window holds only once wake-ups
/// have followed each other closely for ``sustain``.
struct WakeUpPacing {
    /// Linux's own timer slack for a thread that sleeps (50 µs by default): a due instant waits
    /// no longer than a sleeping thread would oversleep.
    static var window: UInt64 { 50_000 }
    /// Wake-ups closer than this to the one before keep the stream dense (the window plus a
    /// timer's usual lateness).
    static var denseGap: UInt64 { 200_000 }
    /// How long wake-ups must have been dense before they are held apart.
    static var sustain: UInt64 { 10_000_000 }

    /// When the last wake-up looked for what was due.
    private var lastWakeUp: MonotonicInstant?
    /// The first wake-up of the current dense run.
    private var denseSince: MonotonicInstant?

    /// A wake-up looked for what was due at `now`.
    mutating func wokeUp(at now: MonotonicInstant) {
        if let last = lastWakeUp, now.nanoseconds &- last.nanoseconds < Self.denseGap {
            if denseSince == nil { denseSince = last }
        } else {
            denseSince = nil
        }
        lastWakeUp = now
    }

    /// Whether wake-ups are held ``window`` apart.
    var isHoldingApart: Bool {
        guard let denseSince, let lastWakeUp else { return false }
        return lastWakeUp.nanoseconds &- denseSince.nanoseconds >= Self.sustain
    }

    /// The earliest instant a wake-up for `wakeUp` may come at.
    func earliest(_ wakeUp: MonotonicInstant) -> MonotonicInstant {
        guard isHoldingApart, let lastWakeUp else { return wakeUp }
        return max(wakeUp, MonotonicInstant(nanoseconds: lastWakeUp.nanoseconds &+ Self.window))
    }
}
