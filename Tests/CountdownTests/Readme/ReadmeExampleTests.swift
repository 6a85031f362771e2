// README import begins
import Countdown
// README import ends
import Dispatch
import Testing

@testable import CountdownConformance

// The README's example, compiled and run here so that it stays true.

/// Stands in for a UIButton.
final class RetryButton: @unchecked Sendable {  // only touched on its delivery queue
    var title = "Get code"
    var isEnabled = true
    /// Every title shown, in order.
    var titles: [String] = []

    func show(_ title: String, enabled: Bool) {
        titles.append(title)
        self.title = title
        isEnabled = enabled
    }
}

// README example begins
/// The screen that asks for an SMS code. The countdown belongs to `codes`, not to the screen:
/// a screen created again finds it running and shows the time left.
struct SMSCodeScreen {
    let codes: any CountdownScheduler
    let phone: String
    let button: RetryButton

    private var key: String { "sms-code:\(phone)" }

    /// The screen appears (again): show a countdown that is still running, if there is one.
    func appeared() {
        codes.attach(key: key, observer: update)
    }

    /// "Get code" tapped: start the countdown (tapping again while it runs only re-attaches).
    func tapped() throws {
        try codes.start(key: key, duration: .seconds(60), observer: update)
    }

    private func update(_ event: CountdownEvent) {
        switch event.kind {
        case .tick: button.show("Retry in \(event.wholeSecondsRemaining) s", enabled: false)
        case .finished: button.show("Get code", enabled: true)
        }
    }
}
// README example ends

@Suite("README", .dedicatedThread)
struct ReadmeExampleTests {
    @Test("the SMS-code button outlives its screen")
    func smsButton() async throws {
        let main = DeliveryQueue()  // the main queue, in an app
        let codes = try TimestampScheduler(clock: .continuous, deliveryQueue: main.queue)
        defer { codes.shutdown() }

        // A button is touched on its delivery queue only, as a UIButton on the main queue: the
        // countdown goes on ticking into it while the test looks.
        func shown(_ button: RetryButton) -> (title: String, isEnabled: Bool) {
            main.queue.sync { (button.title, button.isEnabled) }
        }
        let firstButton = RetryButton()
        let first = SMSCodeScreen(codes: codes, phone: "+15550100", button: firstButton)
        first.appeared()
        main.drain()
        #expect(shown(firstButton) == ("Get code", true))
        try first.tapped()
        main.drain()
        // The first tick shows the whole minute (on a loaded machine a second one may follow
        // before the test looks).
        #expect(main.queue.sync { firstButton.titles.first } == "Retry in 60 s")
        #expect(!shown(firstButton).isEnabled)

        // The user leaves; a new screen for the same phone attaches to the running countdown.
        settle(.milliseconds(1100))
        let secondButton = RetryButton()
        SMSCodeScreen(codes: codes, phone: "+15550100", button: secondButton).appeared()
        main.drain()
        // More than a second has passed: not restarted (60 s), not over (Get code).
        let second = shown(secondButton)
        let seconds = Int(second.title.dropFirst("Retry in ".count).dropLast(" s".count))
        #expect(second.title.hasPrefix("Retry in ") && (1...59).contains(seconds ?? 0),
                "the new screen shows \(second.title)")
        #expect(!second.isEnabled)
        #expect(codes.activeCount == 1)
    }

    @Test("the app's scheduler, as the README makes it: on the main queue, immune to a clock change")
    func appScheduler() throws {
        // README scheduler begins
        // One scheduler for the app, delivering on the main queue. `.continuous` cannot be moved by a
        // user changing the clock; `.wall` (the default) reads `Date`, as the articles did.
        let codes = try TimestampScheduler(clock: .continuous, deliveryQueue: .main)
        // README scheduler ends
        defer { codes.shutdown() }
        #expect(codes.profile.wallClockJump == .immune && codes.profile.suspension == .keepsDeadline)
    }

    @Test("whole seconds are rounded up, so the button never reads 0 while disabled")
    func wholeSeconds() {
        func seconds(_ d: Duration) -> Int64 {
            CountdownEvent(key: "k", kind: .tick, remaining: d).wholeSecondsRemaining
        }
        #expect(seconds(.seconds(42)) == 42)
        #expect(seconds(.milliseconds(41_001)) == 42)
        #expect(seconds(.milliseconds(1)) == 1)
        #expect(seconds(.zero) == 0)
    }
}
