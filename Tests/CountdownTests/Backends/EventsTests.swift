import CountdownSupport
import Dispatch
import Testing

@testable import Countdown
@testable import CountdownBenchKit
@testable import CountdownConformance

/// `events(key:)` iterated the way apps and servers do, in `for await` loops, on every backend;
/// and, looking inside the table, that a consumer who went away left nothing of itself behind.
/// (The `events` conformance check judges the same points from outside, for every backend.)
@Suite("Events", .dedicatedThread, .timeLimit(.minutes(3)))
struct EventsTests {
    static let backends = CountdownBackend.allWithVariants

    @Test("a for-await loop hears the remaining time, the ticks and the finish, then ends", arguments: backends)
    func loopEndsAfterTheFinish(_ backend: CountdownBackend) async throws {
        let s = try backend.makeScheduler(.init(tickInterval: .milliseconds(20)))
        defer { s.shutdown() }
        try s.start(key: "k", duration: .milliseconds(300)) { _ in }
        var heard: [CountdownEvent] = []
        for await event in s.events(key: "k") { heard.append(event) }
        #expect(heard.first?.kind == .tick)
        #expect(heard.last == CountdownEvent(key: "k", kind: .finished, remaining: .zero))
        // No count of ticks: with operation-queue's workers blocking the pool in the same
        // process, the task backend's wake-ups come late and catch up (seen: 2 events).
        #expect(heard.allSatisfy { $0.kind == .finished || $0.remaining > .zero })
        #expect(s.activeCount == 0)
    }

    @Test("a cancel ends the loop without a finish", arguments: backends)
    func cancelEndsTheLoop(_ backend: CountdownBackend) async throws {
        let s = try backend.makeScheduler(.init(tickInterval: .milliseconds(20)))
        defer { s.shutdown() }
        try s.start(key: "k", duration: .seconds(30)) { _ in }
        var heard: [CountdownEvent] = []
        for await event in s.events(key: "k") {
            heard.append(event)
            if heard.count == 3 { s.cancel(key: "k") }  // from inside the loop, as a "Cancel" button would
        }
        #expect(heard.count >= 3)
        #expect(!heard.contains { $0.kind == .finished })
    }

    @Test("no countdown under the key: the loop ends at once and nothing starts", arguments: backends)
    func unknownKey(_ backend: CountdownBackend) async throws {
        let s = try backend.makeScheduler(.init(tickInterval: .milliseconds(20)))
        defer { s.shutdown() }
        var count = 0
        for await _ in s.events(key: "nothing") { count += 1 }
        #expect(count == 0)
        #expect(s.activeCount == 0)
    }

    /// Leaving the loop with `break` and cancelling the consumer's task are the two ways a
    /// consumer goes away (a view disappearing cancels its `.task`).
    enum Departure: String, CaseIterable, Sendable { case breaks, isCancelled }

    @Test("a consumer that goes away leaves the countdown running and no observer behind",
          arguments: backends.filter { $0.name != "operation-queue" }, Departure.allCases)
    func consumerGoesAway(_ backend: CountdownBackend, _ departure: Departure) async throws {
        let scheduler = try backend.makeScheduler(.init(tickInterval: .milliseconds(20)))
        defer { scheduler.shutdown() }
        let s = try #require(scheduler as? KeyedCountdownScheduler)
        try s.start(key: "k", duration: .seconds(30)) { _ in }
        let starter = try #require(s.observation(key: "k")).registration
        // A child task, so that it runs on the test's own executor as the test does. The stream
        // is made inside it, as `for await event in scheduler.events(key:)` makes it: nothing
        // else holds it when the loop is left.
        let attached = Locked<ObserverRegistration?>(nil)
        let count = await withTaskGroup(of: Int.self) { group in
            group.addTask {
                var count = 0
                for await _ in s.events(key: "k") {
                    count += 1
                    if count == 1 { attached.withLock { $0 = s.observation(key: "k")?.registration } }
                    if departure == .breaks && count == 3 { break }
                }
                return count
            }
            if departure == .isCancelled {
                // Yields, not Task.sleep: a sleep's wake-up waits for a thread of the pool that
                // the operation-queue backend's workers, in tests running beside, keep busy.
                while attached.withLock({ $0 }) == nil { await Task.yield() }
                group.cancelAll()
            }
            return await group.next() ?? -1
        }
        let stream = attached.withLock { $0 }
        // While the stream was heard, its own registration observed the countdown: not the starter's.
        #expect(stream != nil && stream != starter, "events(key:) did not attach")
        if departure == .breaks { #expect(count == 3) }

        // Nothing of the consumer is left: the countdown is observed by no one.
        #expect(waitUntil(timeout: .seconds(5)) {
            s.deliveryQueue.sync {}
            return s.observation(key: "k").map { !$0.observed && $0.registration != stream } ?? false
        }, "the scheduler still holds the departed consumer's observer")
        #expect(count >= 1)
        // The countdown runs on, and a screen attaching later is told the time left.
        let left = try #require(s.remaining(key: "k"), "the countdown ended with its consumer")
        // Judged by what the scheduler says, with a watchdog, not after a fixed 100 ms: a
        // backend whose remaining follows its ticks says the same until its next tick comes,
        // which a loaded 2-core machine delays (a CI run saw 29.98 s twice, 100 ms apart).
        var later = left
        #expect(waitUntil(timeout: .seconds(5)) { later = s.remaining(key: "k") ?? .zero; return later < left },
                "the countdown stopped with its consumer: \(left), then \(later)")
        let told = DispatchSemaphore(value: 0)
        #expect(s.attach(key: "k") { if $0.kind == .tick { told.signal() } } != nil)
        #expect(told.wait(timeout: .now() + 10) == .success, "the observer attached afterwards heard nothing")
    }

    /// The operation-queue backend, apart: its workers block the pool the consumers' tasks
    /// need, so it gets the same check with a consumer on a thread of its own.
    @Test("operation-queue: a consumer that stops leaves no observer behind")
    func operationQueueConsumerStops() throws {
        let scheduler = try OperationQueueScheduler(tickInterval: .milliseconds(20))
        defer { scheduler.shutdown() }
        try scheduler.start(key: "k", duration: .seconds(2)) { _ in }
        let consumer = StreamConsumer(scheduler.events(key: "k"), time: .real, stopAfter: 3)
        #expect(consumer.waitForEnd() == .stopped)
        #expect(waitUntil(timeout: .seconds(5)) {
            scheduler.deliveryQueue.sync {}
            return scheduler.observation(key: "k")?.observed == false
        }, "the scheduler still holds the departed consumer's observer")
        #expect(scheduler.remaining(key: "k") != nil)
    }

    @Test("an observer attached after a stream ends that stream; the new observer hears the rest", arguments: backends)
    func replacedStreamEnds(_ backend: CountdownBackend) async throws {
        let s = try backend.makeScheduler(.init(tickInterval: .milliseconds(20)))
        defer { s.shutdown() }
        try s.start(key: "k", duration: .milliseconds(500)) { _ in }
        let first = s.events(key: "k")
        let second = s.events(key: "k")
        // It ended (this loop returns) without the finish, which the second stream hears.
        var firstKinds: [CountdownEvent.Kind] = []
        for await event in first { firstKinds.append(event.kind) }
        #expect(!firstKinds.contains(.finished), "the replaced stream heard the finish")
        var last: CountdownEvent?
        for await event in second { last = event }
        #expect(last?.kind == .finished)
    }
}

