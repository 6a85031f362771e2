import Testing

@testable import Countdown

/// One drain's decisions as a value: when it lingers, gathers, hands the queue back, ends.
/// Made-up instants in nanoseconds; nothing sleeps.
@Suite("Drain run")
struct DrainRunTests {
    static let turn = DrainRun.turn, gather = DrainRun.gather

    @Test("a drain that does not linger takes again after a batch and ends, noting the gap, after an empty one")
    func plainDrain() {
        var run = DrainRun(began: 0, lingering: false, dense: true, hold: nil)
        #expect(run.delivered(tookAnything: true, now: 10) == .take(handingBack: nil))
        #expect(run.delivered(tookAnything: false, now: 20) == .end(notingGap: true))
    }

    @Test("a lingering drain in a dense stream gathers after an empty batch, takes without waiting for the lock while events come, and ends once a gather finds nothing")
    func lingeringDrain() {
        var run = DrainRun(began: 0, lingering: true, dense: true, hold: nil)
        #expect(run.delivered(tookAnything: true, now: 10) == .takeLingering)
        #expect(run.delivered(tookAnything: false, now: 20) == .gather(until: 20 + Self.gather))
        #expect(run.gathered(true, now: 20 + Self.gather) == .takeLingering, "events came: still dense")
        #expect(run.delivered(tookAnything: false, now: 30 + Self.gather) == .gather(until: 30 + 2 * Self.gather))
        #expect(run.gathered(false, now: 30 + 2 * Self.gather) == .take(handingBack: nil), "nothing came: no longer dense")
        #expect(run.delivered(tookAnything: false, now: 40 + 2 * Self.gather) == .end(notingGap: true))
    }

    @Test("a lingering drain in a sparse stream does not gather")
    func sparseDoesNotLinger() {
        var run = DrainRun(began: 0, lingering: true, dense: false, hold: nil)
        #expect(run.delivered(tookAnything: true, now: 10) == .take(handingBack: nil))
        #expect(run.delivered(tookAnything: false, now: 20) == .end(notingGap: true))
    }

    @Test("at its turn a drain hands the queue back, once, telling the next drain whether it lingers, and ends after the batch it takes last")
    func turnHandsBack() {
        var dense = DrainRun(began: 100, lingering: true, dense: true, hold: nil)
        #expect(dense.delivered(tookAnything: true, now: 100 + Self.turn - 1) == .takeLingering, "before its turn")
        #expect(dense.delivered(tookAnything: true, now: 100 + Self.turn) == .take(handingBack: true))
        #expect(dense.delivered(tookAnything: true, now: 200 + Self.turn) == .end(notingGap: false), "handed back: the next drain goes on")
        var sparse = DrainRun(began: 0, lingering: false, dense: false, hold: nil)
        #expect(sparse.delivered(tookAnything: true, now: Self.turn) == .take(handingBack: false))
        #expect(sparse.delivered(tookAnything: false, now: Self.turn + 1) == .end(notingGap: false))
    }

    @Test("a drain that begins with a batch held for the store does not hand back until a batch passed the store")
    func holdKeepsTheQueue() {
        var run = DrainRun(began: 0, lingering: false, dense: false, hold: .init(count: 1, through: 3))
        #expect(run.delivered(tookAnything: true, now: 2 * Self.turn) == .take(handingBack: nil))
        run.passedStore()
        #expect(run.hold == nil)
        #expect(run.delivered(tookAnything: true, now: 2 * Self.turn) == .take(handingBack: false))
    }
}
