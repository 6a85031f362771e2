import Countdown
import Dispatch
import Foundation
import Testing

// The README's virtual-time example, compiled and run here so that it stays true. It drives the
// README's `SMSCodeScreen` (ReadmeExampleTests.swift) on the main queue, from the main actor, as
// an app's test would: no sleep, no thread, and the same events every run.

// README virtual-time example begins
@Test("the SMS-code screen in virtual time") @MainActor
func smsCodeScreen() throws {
    let codes = try VirtualScheduler(deliveryQueue: .main)
    let button = RetryButton()
    let screen = SMSCodeScreen(codes: codes, phone: "+15550100", button: button)

    try screen.tapped()
    try codes.advance(by: .seconds(59))     // returns once every tick on the way was shown
    #expect(button.title == "Retry in 1 s" && !button.isEnabled)
    try codes.advance(by: .seconds(1))
    #expect(button.title == "Get code" && button.isEnabled)

    // Tap again, leave the screen at 30 s left, come back 10 s later: it attaches.
    try screen.tapped()
    try codes.advance(by: .seconds(30))
    try codes.advance(by: .seconds(10))
    let again = RetryButton()
    SMSCodeScreen(codes: codes, phone: "+15550100", button: again).appeared()
    try codes.advance(by: .zero)            // delivers the attach's tick, moves no time
    #expect(again.title == "Retry in 20 s" && !again.isEnabled)

    // Fifteen seconds in the background.
    codes.enteredBackground()
    try codes.advance(by: .seconds(15))
    codes.enteredForeground()
    try codes.advance(by: .zero)
    #expect(again.title == "Retry in 5 s")
    try codes.advance(by: .seconds(5))
    #expect(again.title == "Get code" && again.isEnabled)
}
// README virtual-time example ends

@Suite("README: virtual time")
struct ReadmeVirtualTimeExampleTests {

    @Test("the example runs in milliseconds, not the 120 s it plays") @MainActor
    func milliseconds() throws {
        let began = ContinuousClock.now
        try smsCodeScreen()
        // Not a timing assertion: the figure is printed for the README's claim, and the bound
        // is far above any machine's (virtual time never sleeps; real time would take 120 s).
        let took = ContinuousClock.now - began
        print("README virtual-time example: 120 s of countdowns in \(took)")
        #expect(took < .seconds(60))
    }
}
