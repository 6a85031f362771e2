import Countdown
import CountdownSupport

/// Every event one observer received, with when it began and where it ran.
final class Recorder: Sendable {
    struct Record: Sendable {
        let event: CountdownEvent
        /// Nanoseconds on the check's clock (monotonic, or virtual) when the callback began.
        let at: UInt64
        let onDeliveryQueue: Bool
        /// Its place in what ran on the delivery queue.
        let sequence: UInt64
    }

    private let records = Locked<[Record]>([])
    let queue: DeliveryQueue
    let time: CheckTime

    init(_ queue: DeliveryQueue, time: CheckTime) {
        self.queue = queue
        self.time = time
    }

    /// An observer for a countdown started by `start`: records every event, judged for where it ran.
    var observer: CountdownObserver { observer(for: "start") }

    /// An observer for `call` (`start`, `attach`): records every event, judged for where it ran
    /// (``DeliveryQueue/judging(_:_:)``).
    func observer(for call: String) -> CountdownObserver {
        queue.judging(call) { [self] event in
            let at = time.now()
            let record = Record(
                event: event, at: at, onDeliveryQueue: queue.isCurrent, sequence: queue.nextSequence())
            queue.trace(event, at: at)
            records.withLock { $0.append(record) }
        }
    }

    var all: [Record] { records.withLock { $0 } }
    var count: Int { records.withLock { $0.count } }
    var ticks: [Record] { all.filter { $0.event.kind == .tick } }
    var finishes: [Record] { all.filter { $0.event.kind == .finished } }

    func wait(timeout: Duration = .seconds(10), until condition: ([Record]) -> Bool) -> Bool {
        time.waitUntil(timeout: timeout) { condition(self.all) }
    }

    func waitForFinish(timeout: Duration = .seconds(10)) -> Bool {
        wait(timeout: timeout) { $0.contains { $0.event.kind == .finished } }
    }
}
