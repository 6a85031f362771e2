#if Redis
import Countdown
@testable import CountdownRedis
import CountdownSupport
import Synchronization
import Testing

/// ``InboxHearing`` where ticks are delivered: a tick decided while its member still heard its
/// inbox, delivered after its reader learned it could not read, is held there too (CI: a tick
/// decided before the reader knew reached its observer 114 ms after another member's cancel).
@Suite("Inbox hearing")
struct InboxHearingTests {
    static func tick(_ key: String, _ observer: FleetObserver) -> FleetDelivery {
        .tick(observer, epoch: observer.epoch, CountdownEvent(key: key, kind: .tick, remaining: .seconds(1)))
    }

    @Test("a tick decided before the reader lost its inbox is held at delivery once the inbox went unread past the grace since its last answer")
    func heldAtDelivery() {
        let heard = Mutex<[String]>([])
        let observer = FleetObserver { event in heard.withLock { $0.append(event.key) } }
        var hearing = InboxHearing(shardOf: { $0.hasPrefix("b:") ? 1 : 0 })
        let batch: ContiguousArray = [Self.tick("a:1", observer), Self.tick("b:1", observer)]
        // Decided while every inbox was heard; shard 0's reader then lost its connection, its
        // last answer more than the grace ago.
        hearing.lost(shard: 0, since: Int64(SystemClocks.monotonic()) - InboxHearing.grace - 1_000_000)
        FleetDelivery.deliver(batch, hearing: hearing)
        #expect(heard.withLock { $0 } == ["b:1"], "shard 0's tick was delivered while its inbox went unread")
        // Its last answer within the grace: delivered, as when the reader reads again.
        var recent = InboxHearing()
        recent.lost(shard: 0, since: Int64(SystemClocks.monotonic()) + 10 * InboxHearing.grace)
        FleetDelivery.deliver(batch, hearing: recent)
        hearing.apply(.regained, shard: 0)
        FleetDelivery.deliver(batch, hearing: hearing)
        #expect(heard.withLock { $0 } == ["b:1", "a:1", "b:1", "a:1", "b:1"])
    }

    @Test("a reader's first failure of a series anchors the hold; reading again lifts it")
    func firstFailureAnchors() {
        var hearing = InboxHearing()
        hearing.apply(.lost(since: 1_000), shard: 0)
        hearing.apply(.lost(since: 900_000_000), shard: 0)
        #expect(hearing.holds("k", now: 1_000 + InboxHearing.grace + 1))
        #expect(!hearing.holds("k", now: 1_000 + InboxHearing.grace))
        hearing.apply(.regained, shard: 0)
        #expect(!hearing.isDeaf && !hearing.holds("k", now: .max))
    }
}
#endif
