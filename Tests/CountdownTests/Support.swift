import CountdownLocking
import Dispatch
import Foundation
import Testing

@testable import Countdown

/// Nanoseconds on CLOCK_MONOTONIC, the clock the backends schedule on.
func monotonicNow() -> UInt64 { DispatchTime.now().uptimeNanoseconds }


/// What the tests allow for clock granularity in "never before" checks, and nothing else.
let granularity: UInt64 = 1_000_000

/// Every built-in backend, for parameterized tests.
let allBackends = CountdownBackend.all.filter { b in ProcessInfo.processInfo.environment["ONLY"].map { $0.split(separator: ",").contains(Substring(b.description)) } ?? true }

extension CountdownBackend: CustomTestStringConvertible {
    public var testDescription: String { description }
}

/// A delivery queue the tests can recognise from inside an observer.
final class MarkedQueue: Sendable {
    let queue = DispatchQueue(label: "countdown.tests.delivery")
    private let key = DispatchSpecificKey<Int>()

    init() { queue.setSpecific(key: key, value: 1) }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == 1 }

    /// Runs everything queued so far.
    func drain() { queue.sync {} }
}

/// Records the events of one observer with the monotonic time they began at.
final class EventLog: Sendable {
    struct Record: Sendable {
        let event: CountdownEvent
        let at: UInt64
        let onDeliveryQueue: Bool
    }

    private let records = Locked<[Record]>([])
    let deliveryQueue: MarkedQueue?

    init(deliveryQueue: MarkedQueue? = nil) { self.deliveryQueue = deliveryQueue }

    var observer: CountdownObserver {
        { [self] event in
            let at = monotonicNow()
            let onQueue = deliveryQueue?.isCurrent ?? true
            records.withLock { $0.append(Record(event: event, at: at, onDeliveryQueue: onQueue)) }
        }
    }

    var all: [Record] { records.withLock { $0 } }
    var count: Int { records.withLock { $0.count } }
    var ticks: [Record] { all.filter { $0.event.kind == .tick } }
    var finishes: [Record] { all.filter { $0.event.kind == .finished } }

    /// Waits (polling, without blocking a thread) until `condition` holds or `timeout` passes.
    func wait(timeout: Duration = .seconds(10), until condition: ([Record]) -> Bool) async -> Bool {
        await eventually(timeout: timeout) { condition(self.all) }
    }

    func waitForFinish(timeout: Duration = .seconds(10)) async -> Bool {
        await wait(timeout: timeout) { $0.contains { $0.event.kind == .finished } }
    }
}

/// Polls `condition` every few milliseconds; false when `timeout` passed first. This is the
/// watchdog that turns a hung backend into a failed test.
///
/// It sleeps its thread instead of awaiting `Task.sleep`: tests run on a thread of their own
/// (``DedicatedThread``), and `Task.sleep` would wake through the shared pool that the
/// operation-queue backend starves.
func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        settle(for: .milliseconds(3))
    }
    return condition()
}

/// Lets time pass on the test's own thread (see ``eventually(timeout:_:)`` for why it blocks).
func settle(for duration: Duration) {
    Thread.sleep(forTimeInterval: duration.seconds)
}


/// Checks what every observer's event list must satisfy, whatever happened around it:
/// ticks positive and never increasing, at most one finish, and nothing after it.
func expectWellFormed(_ records: [EventLog.Record], _ label: String = "",
                      sourceLocation: SourceLocation = #_sourceLocation) {
    var previous: Duration?
    var finished = false
    for record in records {
        #expect(!finished, "\(label): \(record.event) after the finish", sourceLocation: sourceLocation)
        switch record.event.kind {
        case .tick:
            #expect(record.event.remaining > .zero, "\(label): tick carries \(record.event.remaining)",
                    sourceLocation: sourceLocation)
            if let previous {
                #expect(record.event.remaining <= previous,
                        "\(label): remaining rose from \(previous) to \(record.event.remaining)",
                        sourceLocation: sourceLocation)
            }
            previous = record.event.remaining
        case .finished:
            #expect(record.event.remaining == .zero, sourceLocation: sourceLocation)
            finished = true
        }
    }
}
