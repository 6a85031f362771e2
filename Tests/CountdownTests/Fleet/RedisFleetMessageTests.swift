#if Redis
@testable import CountdownRedis
import Testing

/// What members tell each other, as the scripts write it: parsed field by field, the key last.
@Suite("Fleet messages")
struct RedisFleetMessageTests {
    @Test("a pause and a resume carry the countdown's change number; the key may hold spaces")
    func pauseAndResume() {
        #expect(FleetMessage("p 7 3 9000000 m/1 sms code +86 138") == .paused(generation: 7, change: 3, remaining: 9_000_000, token: "m/1"))
        #expect(FleetMessage("r 7 4 1700000000000000 m/1 k") == .resumed(generation: 7, change: 4, deadline: 1_700_000_000_000_000, token: "m/1"))
    }

    @Test("a finish, a cancel, a replacement, a wake-up and a quit")
    func theOthers() {
        #expect(FleetMessage("f 7 m/1 a key") == .finished(generation: 7, token: "m/1"))
        #expect(FleetMessage("x 7 m/1 k") == .cancelled(generation: 7, token: "m/1"))
        #expect(FleetMessage("l 7 m/1 k") == .replaced(generation: 7, token: "m/1"))
        #expect(FleetMessage("w 1700000000000000") == .wake(deadline: 1_700_000_000_000_000))
        #expect(FleetMessage("q") == .quit)
    }

    @Test("what is not a message of this version is ignored: a pause without its change number, an unknown kind, a missing token")
    func ignored() {
        #expect(FleetMessage("p 7 9000000 m/1 k") == nil)
        #expect(FleetMessage("quit") == nil)
        #expect(FleetMessage("z 7 m/1 k") == nil)
        #expect(FleetMessage("f 7") == nil)
        #expect(FleetMessage("") == nil)
    }
}
#endif
