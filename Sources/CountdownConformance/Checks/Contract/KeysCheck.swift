import Countdown
import CountdownSupport
import Foundation

/// The `keys` check: keys from the whole of Unicode, compared as Swift compares strings.
enum KeysCheck {
    static let check = ConformanceCheck(
        "keys", .contract,
        "keys beyond ASCII (CJK, emoji, combining marks, right-to-left, NUL, 10 000 characters) each run; canonically equal keys are one key, ASCII or not",
        body: run)

    /// Each must start, be heard from at once, finish, and be listed as itself meanwhile.
    static let keys: [(label: String, key: String)] = [
        ("CJK", "验证码-手机"),
        ("emoji", "📱🔐👩‍👩‍👧"),
        ("combining marks", "ZA\u{0336}\u{0335}LGO\u{0301}"),
        ("right-to-left", "رمز التحقق"),
        ("an embedded NUL", "sms\u{0}one"),
        ("the same prefix after a NUL", "sms\u{0}two"),
        ("10 000 characters", String(repeating: "k", count: 9_999) + "é"),
    ]

    static func run(_ c: CheckContext) throws {
        let h = try c.makeScheduler(tick: .milliseconds(20))
        let s = h.scheduler
        let duration = Duration.milliseconds(200)
        var logs: [(String, String, Recorder)] = []
        var invoked: [UInt64] = []
        for (label, key) in keys {
            let log = h.recorder()
            invoked.append(h.now())
            let outcome = try s.start(key: key, duration: duration, observer: log.observer)
            c.expect(outcome == .started, "\(label): start returned \(outcome), not started (another key took it)")
            logs.append((label, key, log))
        }
        let listed = s.activeKeys
        for (label, key, _) in logs {
            c.expect(listed.contains(key), "\(label): activeKeys does not list the key as it was given")
            c.expect(s.remaining(key: key) != nil, "\(label): remaining(key:) is nil right after start")
        }
        // Judged by the history, not by how fast the calls came: a countdown whose deadline (at
        // least its start's call plus the duration) had not come when activeCount returned was
        // running whenever it read, so it is counted; one that may have finished may be left out
        // (seen in CI: seven 200 ms countdowns, the last of fifteen calls under load 200 ms on).
        let count = s.activeCount
        let returned = h.now()
        let running = invoked.filter { $0 + UInt64(duration.nanoseconds) > returned }.count
        c.expect(count >= running && count <= keys.count,
                 "activeCount is \(count) after \(keys.count) distinct keys started, \(running) of them certainly running: not between \(running) and \(keys.count)")
        for (label, key, log) in logs {
            c.expect(log.wait(timeout: .seconds(3)) { !$0.isEmpty }, "\(label): started, then nothing was heard within 3 s")
            c.expect(log.waitForFinish(), "\(label): no finish within 10 s of a 200 ms countdown")
            h.drain()
            EventRules.wellFormed(log.all, label, in: c)
            c.expect(log.all.allSatisfy { $0.event.key == key }, "\(label): an event carried another key")
        }

        // "é" precomposed and decomposed are one String in Swift, so one key.
        let precomposed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let first = h.recorder(), second = h.recorder()
        try s.start(key: precomposed, duration: .seconds(5), observer: first.observer)
        let outcome = try s.start(key: decomposed, duration: .seconds(5), observer: second.observer)
        if case .attached = outcome {} else {
            c.fail("start with \"cafe\\u{301}\" while \"caf\\u{E9}\" runs returned \(outcome), not attached: canonically equal keys must be one key")
        }
        c.expect(s.remaining(key: decomposed) != nil, "remaining(key:) of the decomposed spelling is nil while the precomposed one runs")
        c.expect(s.cancel(key: decomposed), "cancel with the decomposed spelling returned false")
        c.expect(s.remaining(key: precomposed) == nil, "the precomposed countdown runs on after a cancel with the decomposed spelling")

        // The Kelvin sign's canonical form is the letter K: an ASCII key and a key that is not
        // ASCII are one key (a backend that hashes ASCII bytes apart must normalize the rest).
        let ascii = "rate-limit:K", kelvin = "rate-limit:\u{212A}"
        try s.start(key: ascii, duration: .seconds(5), observer: h.recorder().observer)
        let kelvinOutcome = try s.start(key: kelvin, duration: .seconds(5), observer: h.recorder().observer)
        if case .attached = kelvinOutcome {} else {
            c.fail("start with \"rate-limit:\\u{212A}\" (the Kelvin sign) while \"rate-limit:K\" runs returned \(kelvinOutcome), not attached: canonically equal keys must be one key")
        }
        c.expect(s.cancel(key: kelvin), "cancel with the Kelvin sign's spelling returned false while \"rate-limit:K\" ran")
        c.expect(s.remaining(key: ascii) == nil, "\"rate-limit:K\" runs on after a cancel with the Kelvin sign's spelling")
        c.expectEqual(s.activeCount, 0, "activeCount", "after every key finished or was cancelled")
    }
}
