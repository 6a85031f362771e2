import Countdown
import CountdownSupport
import Dispatch
import Testing

// The README's async examples, compiled and run here so that they stay true.

// README async example begins
/// The "Retry in 42 s" label of a SwiftUI view, fed by a `for await` loop. The view runs
/// `.task(id: phone) { await label.follow(codes, key: "sms-code:\(phone)") }`: the loop ends
/// when the countdown does, or when the view disappears and SwiftUI cancels its task, which
/// leaves the countdown running for the next time the view appears.
@MainActor
final class RetryLabel {
    private(set) var text = "Get code"
    private(set) var isEnabled = true

    func follow(_ codes: any CountdownScheduler, key: String) async {
        for await event in codes.events(key: key) {
            switch event.kind {
            case .tick: (text, isEnabled) = ("Retry in \(event.wholeSecondsRemaining) s", false)
            case .finished: (text, isEnabled) = ("Get code", true)
            }
        }
    }
}

/// A server's rate limit: one window per user. A request inside the window is told how long
/// to wait; a client may instead long-poll until its window closes.
struct RateLimit: Sendable {
    let windows: any CountdownScheduler
    let window: Duration

    /// Admits the request and opens the user's window, or returns how long the user must wait.
    func admit(_ user: String) throws(CountdownError) -> Duration? {
        // remaining(key:) first: start on a running window would attach a new observer to it
        // and end a long-poll already waiting on it.
        if let wait = windows.remaining(key: user) { return wait }
        if case .attached(let wait) = try windows.start(key: user, duration: window, observer: { _ in }) {
            return wait
        }
        return nil
    }

    /// Returns when the user may send again: true once the window has closed (or if none was
    /// open); false when the window was cancelled, another wait took this one's place, or the
    /// request's task was cancelled (which ends the wait, not the window).
    func waitUntilOpen(_ user: String) async -> Bool {
        var closed = true
        for await event in windows.events(key: user) { closed = event.kind == .finished }
        return closed && !Task.isCancelled
    }
}
// README async example ends

@Suite("README async examples", .dedicatedThread, .timeLimit(.minutes(2)))
struct ReadmeAsyncExampleTests {
    @Test("the SwiftUI-style label follows the countdown to its end, and its loop ends with it")
    func label() async throws {
        let codes = try TimestampScheduler(tickInterval: .milliseconds(50), clock: .continuous)
        defer { codes.shutdown() }
        try codes.start(key: "sms-code:+15550100", duration: .seconds(3)) { _ in }
        // Paused until the label follows it: however late the loop's task first runs (beside
        // stress-ng it came after a 1.5 s countdown had ended, and heard nothing), it attaches
        // to a countdown still there, and is told its frozen remaining time at once.
        #expect(codes.pause(key: "sms-code:+15550100"))
        let frozen = try #require(codes.remaining(key: "sms-code:+15550100"))
        let label = RetryLabel()
        #expect(await label.text == "Get code")
        let followed = Locked(false)
        let follower = Task { @MainActor in
            await label.follow(codes, key: "sms-code:+15550100")
            followed.withLock { $0 = true }
        }
        // Yields, not Task.sleep: a sleep's wake-up waits for the pool that operation-queue
        // tests running beside keep busy. The attach tick is told at once.
        var shown = (text: "Get code", isEnabled: true)
        while shown.text == "Get code" && !followed.withLock({ $0 }) {
            await Task.yield()
            shown = await MainActor.run { (label.text, label.isEnabled) }
        }
        let told = CountdownEvent(key: "sms-code:+15550100", kind: .tick, remaining: frozen).wholeSecondsRemaining
        #expect(shown.text == "Retry in \(told) s", "the label showed \(shown.text) where \(frozen) remained")
        #expect(!shown.isEnabled)
        #expect(codes.resume(key: "sms-code:+15550100"))
        await follower.value
        #expect(await label.text == "Get code")
        #expect(await label.isEnabled)
    }

    @Test("the view disappearing cancels the loop; the countdown runs on for the next view")
    func viewDisappears() async throws {
        let codes = try TimestampScheduler(tickInterval: .milliseconds(50), clock: .continuous)
        defer { codes.shutdown() }
        try codes.start(key: "k", duration: .seconds(30)) { _ in }
        let label = RetryLabel()
        let view = Task { @MainActor in await label.follow(codes, key: "k") }
        // Yields, not Task.sleep: a sleep's wake-up waits for the pool that operation-queue
        // tests running beside keep busy.
        while await label.text == "Get code" { await Task.yield() }
        view.cancel()
        await view.value
        let shown = await label.text
        #expect(shown.hasPrefix("Retry in "), "the label shows \(shown)")
        #expect(codes.remaining(key: "k") != nil, "the countdown ended with the view")
    }

    @Test("the rate limit refuses inside the window and a long-poll returns when it closes")
    func rateLimit() async throws {
        let windows = try TimestampScheduler(
            tickInterval: .milliseconds(50), clock: .continuous, tolerance: .milliseconds(10))
        defer { windows.shutdown() }
        let limit = RateLimit(windows: windows, window: .milliseconds(400))
        #expect(try limit.admit("ada") == nil)
        let wait = try #require(try limit.admit("ada"))
        #expect(wait > .zero && wait <= .milliseconds(400))
        #expect(try limit.admit("grace") == nil, "one user's window held up another")
        #expect(await limit.waitUntilOpen("ada"))
        #expect(try limit.admit("ada") == nil, "the window did not close")
        #expect(await limit.waitUntilOpen("nobody"), "no window open, yet the wait did not return at once")

        // A cancelled request ends its wait; the window runs on. (A child task, so that it runs
        // on this test's executor, not on the pool operation-queue tests beside keep busy.)
        let long = RateLimit(windows: windows, window: .seconds(30))
        #expect(try long.admit("lin") == nil)
        let waited = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await long.waitUntilOpen("lin") }
            await Task.yield()
            group.cancelAll()
            return await group.next() ?? true
        }
        #expect(!waited, "a cancelled wait said the window had closed")
        #expect(windows.remaining(key: "lin") != nil, "the window ended with the cancelled request")
        windows.cancel(key: "lin")
        #expect(await limit.waitUntilOpen("grace"))
    }
}
