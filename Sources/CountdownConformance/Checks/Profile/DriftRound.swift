/// One round of the drift check, judged as a value: the fires of a countdown the backend ran,
/// and the ticks of the check's own grid (``GridControl``) over the same time.
///
/// Load only ever adds lateness; the schedule is its floor. So the drift is taken between
/// floors: the least late fire of the round's first third and of its last, each against the
/// first fire + k·T. A grid's floor stays put however late the fires between are; a schedule
/// that sleeps T after each fire raises it every tick (timer slack alone, ~50 µs on Linux), and
/// load raises it more.
enum DriftRound: Equatable {
    /// Fires more than two ticks apart: a tick-counting backend loses the ticks of a stall
    /// (the suspension profile, not drift).
    case stalled
    /// The control drifted as well: the machine fell behind (a starved thread pool, a busier
    /// neighbour), and the backend's fires were late for the same reason.
    case machineFellBehind
    /// Too few fires to tell (a countdown of fewer than 20 ticks).
    case tooShort
    /// Nanoseconds per tick by which the backend's floor rose.
    case drift(Double)

    /// Nanoseconds per tick: a drift below is bounded; from `accumulatesFrom` on it accumulates.
    static let boundedBelow = 10_000.0
    static let accumulatesFrom = 20_000.0

    /// Judges `fires` (every fire after the start, the finish last) against `control`.
    static func judge(fires: [UInt64], control: [UInt64], tick: Duration) -> DriftRound {
        guard fires.count >= 20, control.count >= 20 else { return .tooShort }
        let interval = nanoseconds(tick)
        let widest = zip(fires, fires.dropFirst()).map { $1 &- $0 }.max() ?? 0
        guard widest <= 2 * interval else { return .stalled }
        guard floorSlope(control, tick: tick) < boundedBelow else { return .machineFellBehind }
        return .drift(floorSlope(fires, tick: tick))
    }

    /// How much later, in nanoseconds per tick, the floor of `fires`' lateness is in their last
    /// third than in their first: between the least late fire of each (against fires[0] + k·T).
    static func floorSlope(_ fires: [UInt64], tick: Duration) -> Double {
        let interval = Double(nanoseconds(tick))
        let lateness = fires.indices.map { Double(Int64(fires[$0]) - Int64(fires[0])) - Double($0) * interval }
        let third = fires.count / 3
        let early = (0..<third).min { lateness[$0] < lateness[$1] }!
        let late = (fires.count - third..<fires.count).min { lateness[$0] < lateness[$1] }!
        return (lateness[late] - lateness[early]) / Double(late - early)
    }
}
