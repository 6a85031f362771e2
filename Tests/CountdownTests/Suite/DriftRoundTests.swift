@testable import CountdownConformance
import Testing

/// `profile.drift` judges each round as a value (``DriftRound``): here without time, on fires
/// made up to look like a loaded machine's.
struct DriftRoundTests {
    static let tick = Duration.milliseconds(20)
    static let t: UInt64 = 20_000_000

    /// Lateness a loaded machine adds, from a fixed seed: mostly milliseconds, every fifth
    /// fire on time (a waking thread is often run at once, even beside stress-ng).
    static func load(_ count: Int, seed: UInt64, growing: Bool) -> [UInt64] {
        var random = SplitMix(seed: seed)
        return (0..<count).map { k in
            guard k % 5 != 0 else { return UInt64(random.below(20_000)) }
            let ms = UInt64(random.below(3_000_000))
            return growing ? ms + UInt64(k) * 100_000 : ms
        }
    }

    /// The fires of a schedule: `start` + k·(T + `perTick`), plus `late`.
    static func fires(perTick: UInt64, late: [UInt64], start: UInt64 = 1_000_000_000) -> [UInt64] {
        late.indices.map { start + UInt64($0) * (t + perTick) + late[$0] }
    }

    static let steadyControl = fires(perTick: 0, late: load(90, seed: 9, growing: false))

    @Test("a grid whose fires come later and later (their median drifting ~100 µs per tick) but whose floor holds is bounded")
    func gridUnderLoad() {
        let late = Self.load(90, seed: 1, growing: true)
        let round = DriftRound.judge(fires: Self.fires(perTick: 0, late: late), control: Self.steadyControl, tick: Self.tick)
        guard case .drift(let drift) = round else { Issue.record("\(round)"); return }
        #expect(drift < DriftRound.boundedBelow, "\(drift) ns per tick")
    }

    @Test("a schedule that sleeps T + 50 µs after each fire accumulates, on a loaded machine as on a quiet one")
    func sleeperAccumulates() {
        for late in [[UInt64](repeating: 0, count: 90), Self.load(90, seed: 2, growing: false)] {
            let round = DriftRound.judge(fires: Self.fires(perTick: 50_000, late: late), control: Self.steadyControl, tick: Self.tick)
            guard case .drift(let drift) = round else { Issue.record("\(round)"); continue }
            #expect(drift >= DriftRound.accumulatesFrom, "\(drift) ns per tick")
        }
    }

    @Test("when the control's floor rises too, the machine fell behind: the round is left out, not judged")
    func machineFellBehind() {
        let behind = Self.fires(perTick: 100_000, late: Self.load(90, seed: 3, growing: false))
        let round = DriftRound.judge(fires: behind, control: behind.map { $0 + 3_000 }, tick: Self.tick)
        #expect(round == .machineFellBehind)
    }

    @Test("fires more than two ticks apart are a stall; fewer than 20 tell nothing")
    func stalledAndShort() {
        var fires = Self.fires(perTick: 0, late: [UInt64](repeating: 0, count: 90))
        for k in 40..<90 { fires[k] += 2 * Self.t + 1 }
        #expect(DriftRound.judge(fires: fires, control: Self.steadyControl, tick: Self.tick) == .stalled)
        #expect(DriftRound.judge(fires: Array(fires.prefix(19)), control: Self.steadyControl, tick: Self.tick) == .tooShort)
    }
}
