#if Redis
import Countdown
@testable import CountdownRedis
import Testing

/// The keyspace strategy's expiry notifications in the observer registry, without time,
/// threads or Redis: a notification names a key, not a countdown, and comes on another
/// connection than the answers, in any order with them, and read late under load.
@Suite("Keyspace expiries")
struct KeyspaceExpiryTests {
    typealias Fixture = ObserverRegistryTests.Fixture
    let second = ObserverRegistryTests.second

    @Test("a key's expiry heard before the start's answer is observed finishes it once the answer comes; not a later countdown's")
    func expiredBeforeAnswered() {
        var f = Fixture()
        let a = FleetObserver { _ in }, b = FleetObserver { _ in }
        // The keyspace strategy: the notification comes on the subscriber's connection, the
        // answer on the callers', and under load the answer was read after its own expiry.
        _ = f.registry.expect("m/1", key: "k")
        f.registry.finishExpired(key: "k", slack: second, now: 2 * second, into: &f.decisions)
        f.registry.observe(ObserverRegistryTests.answer("m/1", deadline: 2 * second, told: 0, key: "k", observer: a), now: 3 * second, into: &f.decisions)
        f.deliver([ObjectIdentifier(a): "a"])
        #expect(f.heard["a"] == ["finish"], "the observer's finish was lost with the expiry heard first")
        #expect(f.registry.count == 0)
        // An expiry heard while a start is on its way, of an earlier countdown under the key:
        // the new one's deadline is later than the expiry could be its own.
        _ = f.registry.expect("m/2", key: "k")
        f.registry.finishExpired(key: "k", slack: second, now: 4 * second, into: &f.decisions)
        f.registry.observe(ObserverRegistryTests.answer("m/2", generation: 8, deadline: 14 * second, key: "k", observer: b), now: 4 * second, into: &f.decisions)
        f.deliver([ObjectIdentifier(b): "b"])
        #expect(f.heard["b"] == ["told 10"], "a later countdown was finished by an earlier one's expiry")
        #expect(f.registry.count == 1)
        // A start that found its key free ends what this process observed under it: not itself.
        let c = FleetObserver { _ in }
        _ = f.registry.expect("m/3", key: "k2")
        f.registry.finishFreed(key: "k2", slack: second, now: 5 * second, into: &f.decisions)
        f.registry.observe(ObserverRegistryTests.answer("m/3", generation: 9, deadline: 5 * second + second / 2, told: second / 2, key: "k2", observer: c), now: 5 * second, into: &f.decisions)
        f.deliver([ObjectIdentifier(c): "c"])
        #expect(f.heard["c"] == ["told 0"], "a start was finished by its own look at the key")
        #expect(f.registry.count == 2)
    }

    @Test("a key's expiries end its countdowns observed here oldest first, each once, however late they are read")
    func expiriesEndTheOldestFirst() {
        var f = Fixture()
        let a = FleetObserver { _ in }, b = FleetObserver { _ in }
        // Countdown 7 (deadline 1 s) observed here, then 8 under the same key (started elsewhere
        // after 7 expired, deadline 2 s) attached here before 7's expiry was read.
        _ = f.registry.expect("m/1", key: "k")
        f.registry.observe(ObserverRegistryTests.answer("m/1", deadline: second, told: second, key: "k", observer: a), now: 0, into: &f.decisions)
        _ = f.registry.expect("m/2", key: "k")
        f.registry.observe(ObserverRegistryTests.answer("m/2", generation: 8, deadline: 2 * second, told: second, key: "k", observer: b), now: second, into: &f.decisions)
        f.registry.finishExpired(key: "k", slack: 3 * second, now: second, into: &f.decisions)
        f.deliver([ObjectIdentifier(a): "a", ObjectIdentifier(b): "b"])
        #expect(f.heard["a"] == ["told 1", "finish"], "the first expiry did not end the first countdown")
        #expect(f.heard["b"] == ["told 1"], "the first expiry ended the second countdown")
        f.registry.finishExpired(key: "k", slack: 3 * second, now: 2 * second, into: &f.decisions)
        f.deliver([ObjectIdentifier(a): "a", ObjectIdentifier(b): "b"])
        #expect(f.heard["b"] == ["told 1", "finish"])
        #expect(f.registry.count == 0)
    }

    @Test("an expiry heard before the deadline placed from a late answer finishes it, within the answer's round trip")
    func expiryBeforeALateAnswersDeadline() {
        var f = Fixture()
        let a = FleetObserver { _ in }, b = FleetObserver { _ in }
        let ms = second / 1000
        // Read 50 ms after it was sent: the deadline placed here may be 50 ms late.
        var late = ObserverRegistryTests.answer("m/1", deadline: 1000 * ms, told: 1000 * ms, key: "k", observer: a)
        late.lead = 50 * ms
        _ = f.registry.expect("m/1", key: "k")
        f.registry.observe(late, now: 0, into: &f.decisions)
        f.registry.finishExpired(key: "k", slack: 3 * ms, now: 960 * ms, into: &f.decisions)
        // Read at once: an expiry 40 ms before its deadline is not its own.
        _ = f.registry.expect("m/2", key: "j")
        f.registry.observe(ObserverRegistryTests.answer("m/2", generation: 8, deadline: 1000 * ms, told: 1000 * ms, key: "j", observer: b), now: 0, into: &f.decisions)
        f.registry.finishExpired(key: "j", slack: 3 * ms, now: 960 * ms, into: &f.decisions)
        f.deliver([ObjectIdentifier(a): "a", ObjectIdentifier(b): "b"])
        #expect(f.heard["a"] == ["told 1", "finish"], "an expiry within the answer's round trip of the deadline was taken for another countdown's")
        #expect(f.heard["b"] == ["told 1"])
    }
}
#endif
