import Countdown
import CountdownSupport
import Foundation

/// The `distinct-keys` check: keys that are different strings, however alike they look, are
/// different countdowns. Keys compare by canonical equivalence, as Swift compares strings, and
/// by nothing looser: not by letter case, not trimmed, not by a prefix, not by compatibility
/// (NFKC) folding, not without emoji modifiers or variation selectors.
enum DistinctKeysCheck {
    static let check = ConformanceCheck(
        "distinct-keys", .contract,
        "keys alike but not canonically equivalent (case, whitespace, a shared 256- or 10 000-byte prefix, emoji modifiers, variation selectors, NFKC) are different countdowns",
        body: run)

    /// Pairs of keys that must stay apart.
    static let pairs: [(label: String, first: String, second: String)] = [
        ("letter case", "sms-code:user-ABC", "sms-code:user-abc"),
        ("a leading space", " sms-code:+15550100", "sms-code:+15550100"),
        ("a trailing space", "sms-code:+15550101 ", "sms-code:+15550101"),
        ("a trailing newline", "sms-code:+15550102\n", "sms-code:+15550102"),
        ("a shared prefix of 256 bytes", String(repeating: "k", count: 256) + "a", String(repeating: "k", count: 256) + "b"),
        ("a shared prefix of 10 000 bytes", String(repeating: "k", count: 10_000) + "a", String(repeating: "k", count: 10_000) + "b"),
        ("an emoji with and without a skin-tone modifier", "like:👍", "like:👍\u{1F3FD}"),
        ("two skin-tone modifiers", "like:👍\u{1F3FB}", "like:👍\u{1F3FF}"),
        ("a variation selector (text and emoji presentation)", "mood:\u{263A}", "mood:\u{263A}\u{FE0F}"),
        ("a ligature, equal only after NFKC folding", "\u{FB01}le", "file"),
        ("full-width letters, equal only after NFKC folding", "\u{FF33}\u{FF2D}\u{FF33}", "SMS"),
        ("a circled digit, equal only after NFKC folding", "slot-\u{2460}", "slot-1"),
    ]

    static func run(_ c: CheckContext) throws {
        precondition(Set(pairs.flatMap { [$0.first, $0.second] }).count == pairs.count * 2, "a key stands in two pairs")
        let h = try c.makeScheduler(tick: .milliseconds(50))
        let s = h.scheduler
        // A pair at a time: within any declared capacity.
        for (label, first, second) in pairs {
            precondition(first != second, "the pair \(label) is one Swift string")
            let firstLog = h.recorder(), secondLog = h.recorder()
            let one = try s.start(key: first, duration: .seconds(30), observer: firstLog.observer)
            let other = try s.start(key: second, duration: .seconds(20), observer: secondLog.observer)
            let compared = "\(KeyText.describe(first)) then \(KeyText.describe(second))"
            c.expect(one == .started, "\(label): start(\(KeyText.describe(first))) returned \(one), not started")
            c.expect(other == .started, "\(label): start(\(compared)) returned \(other), not started: two different keys were taken for one")
            c.expect(s.remaining(key: first).map { $0 > .seconds(20) } ?? false,
                     "\(label): remaining(\(KeyText.describe(first))) is \(String(describing: s.remaining(key: first))) after \(compared) (its 30 s countdown)")
            c.expect(s.remaining(key: second).map { $0 <= .seconds(20) } ?? false,
                     "\(label): remaining(\(KeyText.describe(second))) is \(String(describing: s.remaining(key: second))) after \(compared) (its 20 s countdown)")
            let count = s.activeCount, listed = s.activeKeys
            c.expectEqual(count, 2, "\(label): activeCount", "after \(compared)")
            for key in [first, second] {
                c.expect(listed.filter { $0 == key }.count == 1, "\(label): activeKeys lists \(KeyText.describe(key)) \(listed.filter { $0 == key }.count) times")
            }
            h.drain()
            for (key, log) in [(first, firstLog), (second, secondLog)] {
                let heard = log.all
                c.expect(heard.first?.event.key == key && heard.first?.event.remaining ?? .zero > .seconds(19),
                         "\(label): the observer of \(KeyText.describe(key)) first heard \(heard.first.map { "\(KeyText.describe($0.event.key)) \(EventRules.describe($0.event))" } ?? "nothing")")
            }
            // Cancelling one of the pair leaves the other running.
            c.expect(s.cancel(key: first), "\(label): cancel(\(KeyText.describe(first))) returned false")
            c.expect(s.remaining(key: second) != nil, "\(label): cancel(\(KeyText.describe(first))) also ended \(KeyText.describe(second))")
            c.expect(s.cancel(key: second), "\(label): cancel(\(KeyText.describe(second))) returned false after cancel(\(KeyText.describe(first)))")
            c.expectEqual(s.activeCount, 0, "\(label): activeCount", "after cancelling both keys")
        }
        c.figure("\(pairs.count) pairs of look-alike keys, each two countdowns")
    }
}
