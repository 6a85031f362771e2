import Countdown
import CountdownSupport
import Dispatch
import Foundation
import Synchronization

/// The delivery queue the suite hands a backend: it can tell whether a callback runs on it,
/// whether two callbacks overlap, and in which order things ran on it.
final class DeliveryQueue: Sendable {
    let queue = DispatchQueue(label: "countdown.conformance.delivery")
    private let marker = SpecificKey()
    /// Counts what ran on the queue (callbacks and markers), in the order it ran.
    private let sequence = Atomic<UInt64>(0)
    private let inFlight = Atomic<Int>(0)
    private let overlapCount = Atomic<Int>(0)

    /// `@unchecked Sendable`: `DispatchSpecificKey` is an immutable token, not annotated.
    private final class SpecificKey: @unchecked Sendable {
        let key = DispatchSpecificKey<UInt8>()
    }

    /// Where a callback that ran off the queue, or overlapped another, is reported: the
    /// check's failures. Nowhere for a queue made outside a check.
    private let report: @Sendable (String) -> Void
    /// How many such callbacks were reported, so that a backend that gets every one wrong
    /// fails its check in a few lines, not one per event.
    private let reported = Atomic<Int>(0)
    static let reportLimit = 5

    init(report: @escaping @Sendable (String) -> Void = { _ in }) {
        self.report = report
        queue.setSpecific(key: marker.key, value: 1)
    }

    var isCurrent: Bool { DispatchQueue.getSpecific(key: marker.key) == 1 }

    /// How many callbacks began while another was still running.
    var overlaps: Int { overlapCount.load(ordering: .relaxed) }

    func nextSequence() -> UInt64 { sequence.add(1, ordering: .sequentiallyConsistent).newValue }

    /// Every event observers heard on this queue, in the order heard, folded into one number
    /// (FNV-1a of key, kind, remaining and the check's clock): two runs that heard the same
    /// events in the same order at the same instants have the same trace.
    private let traced = Locked((digest: UInt64(0xcbf2_9ce4_8422_2325), events: 0))

    func trace(_ event: CountdownEvent, at: UInt64) {
        traced.withLock { trace in
            func mix(_ value: UInt64) {
                var value = value
                for _ in 0..<8 {
                    trace.digest = (trace.digest ^ (value & 0xff)) &* 0x100_0000_01b3
                    value >>= 8
                }
            }
            for byte in event.key.utf8 { mix(UInt64(byte)) }
            mix(event.kind == .finished ? 1 : 0)
            mix(UInt64(bitPattern: event.remaining.nanoseconds))
            mix(at)
            trace.events += 1
        }
    }

    var trace: (digest: UInt64, events: Int) { traced.withLock { $0 } }

    /// `observer`, judged each time it is called: on this queue, and not while another callback
    /// of this queue runs (the contract's "on the delivery queue, one at a time"). A breach is
    /// reported naming the call the observer was given to (`start`, `attach`), its key and
    /// the event, in whichever check it happens: every event of every check is judged.
    func judging(_ call: String, _ observer: @escaping CountdownObserver) -> CountdownObserver {
        { [self] event in
            let overlapped = inFlight.add(1, ordering: .sequentiallyConsistent).oldValue > 0
            defer { inFlight.subtract(1, ordering: .sequentiallyConsistent) }
            if overlapped { overlapCount.add(1, ordering: .relaxed) }
            let onQueue = isCurrent
            if !onQueue || overlapped {
                let what = !onQueue ? "ran off the delivery queue" : "began while another callback of the scheduler was running"
                breach("\(call)(\(KeyText.describe(event.key))): \(EventRules.describe(event)) \(what)")
            }
            observer(event)
        }
    }

    private func breach(_ message: String) {
        let count = reported.add(1, ordering: .relaxed).newValue
        if count < Self.reportLimit {
            report(message)
        } else if count == Self.reportLimit {
            report(message + " (and any more on this scheduler are not listed)")
        }
    }

    /// Runs everything queued so far.
    func drain() { queue.sync {} }

    /// Queues a marker; once it has run, its number is what the queue had run before it plus one.
    /// Whatever runs after the marker began after the call that queued it.
    func mark() -> Marker {
        let marker = Marker()
        queue.async { marker.set(self.nextSequence()) }
        return marker
    }

    /// Blocks the queue while `body` runs, so deliveries pile up behind it, as behind a slow
    /// observer or a busy main thread. Nothing is delivered during `body`.
    func holding<T>(_ body: () throws -> T) rethrows -> T {
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        queue.async {
            held.signal()
            release.wait()
        }
        held.wait()
        defer { release.signal() }
        return try body()
    }
}

final class Marker: Sendable {
    private let value = Atomic<UInt64>(0)
    func set(_ sequence: UInt64) { value.store(sequence, ordering: .releasing) }
    /// Zero until the marker has run.
    var sequence: UInt64 { value.load(ordering: .acquiring) }
}
