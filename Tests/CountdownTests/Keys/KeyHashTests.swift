import Testing

@testable import Countdown

/// The index's key hash, without time: keys that `String`'s `==` makes one hash alike, by
/// whichever path (ASCII in place, or normalized), and the seed is what the hash depends on.
@Suite("Key hash")
struct KeyHashTests {
    let hash = KeyHash(seed: 0x0123_4567_89AB_CDEF)

    @Test("canonically equivalent keys hash alike, ASCII or not")
    func canonicalEquivalence() {
        let equivalents: [(String, String)] = [
            ("K", "\u{212A}"),  // Kelvin sign: its NFC form is ASCII
            ("rate-limit:user:K1", "rate-limit:user:\u{212A}1"),
            ("a;b", "a\u{037E}b"),  // Greek question mark
            ("caf\u{E9}", "cafe\u{301}"),
            ("\u{C5}ngstr\u{F6}m:0123456789", "A\u{30A}ngstro\u{308}m:0123456789"),
            ("\u{212B}", "\u{C5}"),
            ("sms-code:+8613812345678\u{1E0A}\u{323}", "sms-code:+8613812345678D\u{323}\u{307}"),
        ]
        for (one, other) in equivalents {
            #expect(one == other, "the test's premise: \(one.debugDescription) == \(other.debugDescription)")
            #expect(hash(one) == hash(other), "\(one.debugDescription) and \(other.debugDescription)")
        }
    }

    @Test("keys that are not equal hash apart, at every length around the word size")
    func distinctKeys() {
        var seen: [UInt64: String] = [:]
        var keys = ["", "k", "K", "k ", " k", "kk", "\u{1F44D}", "\u{1F44D}\u{1F3FD}", "\u{FB01}", "fi", "e\u{301}", "e"]
        for length in 1...40 { keys.append(String(repeating: "x", count: length)) }
        for length in 1...40 { keys.append(String(repeating: "x", count: length - 1) + "y") }
        for n in 0..<2_000 { keys.append("rate-limit:user:\(1_000_000 + n)") }
        for key in keys {
            let value = hash(key)
            #expect(seen[value] == nil, "\(key.debugDescription) and \(seen[value]?.debugDescription ?? "") collide")
            seen[value] = key
        }
    }

    @Test("the hash depends on the seed")
    func seeded() {
        let other = KeyHash(seed: 0xFEDC_BA98_7654_3210)
        let keys = (0..<100).map { "sms-code:+86138\(10_000_000 + $0)" }
        #expect(keys.filter { hash($0) == other($0) }.isEmpty)
        #expect(KeyHash().seed != KeyHash().seed)
    }

    @Test("a non-ASCII key is hashed as the bytes of its NFC form")
    func normalizedPath() {
        let key = "cafe\u{301}"
        let nfc = Array("caf\u{E9}".utf8)
        #expect(hash(key) == nfc.withUnsafeBytes { hash.hash($0) })
    }
}
