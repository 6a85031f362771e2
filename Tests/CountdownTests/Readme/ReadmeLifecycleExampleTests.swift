import Countdown
import CountdownSupport
import Foundation
import Testing

@testable import CountdownConformance

// The README's lifecycle example, compiled and run here so that it stays true.

// README example begins
/// The app's countdowns, kept across launches and told when the app leaves and comes back.
final class AppCountdowns: Sendable {
    let scheduler: KeyedCountdownScheduler

    /// At launch, before any screen starts a countdown. A restored countdown runs unobserved
    /// until its screen appears and attaches by its key (`SMSCodeScreen.appeared()`).
    init(scheduler: KeyedCountdownScheduler, storePath: String, expired: ([String]) -> Void) throws(CountdownStoreError) {
        self.scheduler = scheduler
        // Throws, and leaves the file as it is, when it is corrupt, truncated or from a newer
        // version: the app decides (report it, move the file aside, restore again).
        let restoration = try scheduler.restore(from: CountdownStore(path: storePath))
        // Deadlines that passed while the app was not running: nobody heard these finish.
        expired(restoration.expired)
    }

    /// UIKit: `observe(.default, background: UIApplication.didEnterBackgroundNotification,
    /// foreground: UIApplication.willEnterForegroundNotification)`. A backend that counts ticks
    /// takes off the time the app spent frozen; the background waits until the store holds
    /// every change, since the system may kill the suspended app without another word.
    func observe(_ center: NotificationCenter, background: Notification.Name, foreground: Notification.Name)
        -> [any NSObjectProtocol]
    {
        let scheduler = self.scheduler
        return [
            center.addObserver(forName: background, object: nil, queue: nil) { _ in scheduler.enteredBackground() },
            center.addObserver(forName: foreground, object: nil, queue: nil) { _ in scheduler.enteredForeground() },
        ]
    }
}
// README example ends

@Suite("README lifecycle", .dedicatedThread, .timeLimit(.minutes(1)))
struct ReadmeLifecycleExampleTests {
    @Test("the button's countdown survives a relaunch; one that ended meanwhile is reported")
    func relaunch() throws {
        let folder = NSTemporaryDirectory() + "countdown-readme-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/countdowns.store"
        let center = NotificationCenter()
        let background = Notification.Name("background"), foreground = Notification.Name("foreground")

        // The first launch: a code is asked for, the app goes to the background, comes back,
        // and is then killed (it is released without a word).
        do {
            let app = try AppCountdowns(
                scheduler: DispatchSourceScheduler(tickInterval: .milliseconds(100)), storePath: path) { expired in
                #expect(expired.isEmpty)
            }
            let observers = app.observe(center, background: background, foreground: foreground)
            defer { for observer in observers { center.removeObserver(observer) } }
            try app.scheduler.start(key: "sms-code:+15550100", duration: .seconds(2)) { _ in }
            // Long enough to outlast the background (which waits for the store's write) on a
            // loaded machine; short enough to end while no app runs.
            try app.scheduler.start(key: "sms-code:+15550199", duration: .milliseconds(400)) { _ in }
            app.scheduler.pause(key: "sms-code:+15550199")  // paused: stored, and restored, paused
            app.scheduler.resume(key: "sms-code:+15550199")
            center.post(name: background, object: nil)
            center.post(name: foreground, object: nil)
            #expect(app.scheduler.remaining(key: "sms-code:+15550100") != nil, "the foreground lost the countdown")
            app.scheduler.shutdown()  // before the short one finishes: the store keeps both
        }
        settle(.milliseconds(450))

        // The relaunch: the long countdown is back, the short one ended while no app ran.
        let expiredKeys = Locked<[String]>([])
        let app = try AppCountdowns(
            scheduler: DispatchSourceScheduler(tickInterval: .milliseconds(100)), storePath: path) { expired in
            expiredKeys.withLock { $0 = expired }
        }
        defer { app.scheduler.shutdown() }
        #expect(expiredKeys.withLock { $0 } == ["sms-code:+15550199"])
        let button = RetryButton()
        SMSCodeScreen(codes: app.scheduler, phone: "+15550100", button: button).appeared()
        app.scheduler.deliveryQueue.sync {}
        let shown = app.scheduler.deliveryQueue.sync { (button.title, button.isEnabled) }
        #expect(shown.0.hasPrefix("Retry in ") && !shown.1, "the relaunched screen shows \(shown)")
        #expect(waitUntil { app.scheduler.deliveryQueue.sync { button.isEnabled } }, "the restored countdown never finished")
        #expect(app.scheduler.deliveryQueue.sync { button.title } == "Get code")
    }
}
