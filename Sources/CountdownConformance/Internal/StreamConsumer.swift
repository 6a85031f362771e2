import Countdown
import CountdownSupport

/// Iterates a scheduler's ``CountdownScheduler/events(key:)`` stream in a task of its own, as an
/// app's view or a server's handler would, recording what it hears, so that a check written
/// as plain synchronous code can wait on it.
final class StreamConsumer: Sendable {
    enum End: Equatable, Sendable {
        /// The stream returned nil: the scheduler ended it.
        case ended
        /// The consumer broke out of its loop after `stopAfter` elements.
        case stopped
        /// The consumer's task was cancelled while it waited.
        case cancelled
    }

    private struct State {
        var records: [Recorder.Record] = []
        var end: End?
    }

    private let state = Locked(State())
    private let task: Task<Void, Never>
    private let time: CheckTime

    /// - Parameters:
    ///   - time: the clock of the scheduler the stream comes from: what each element is stamped
    ///     with, and what a wait for the end lets pass.
    ///   - stopAfter: break out of the loop after this many elements.
    init(_ stream: AsyncStream<CountdownEvent>, time: CheckTime, stopAfter: Int? = nil) {
        let state = self.state
        self.time = time
        // On an executor of its own: beside a backend that blocks the global pool (sleeping
        // OperationQueue workers), a consumer on it would wait seconds to run, and the check
        // would judge the pool, not the backend.
        task = Task.detached(executorPreference: SerialQueueExecutor(label: "conformance.consumer")) {
            for await event in stream {
                let count = state.withLock { state -> Int in
                    let record = Recorder.Record(
                        event: event, at: time.now(), onDeliveryQueue: false, sequence: 0)
                    state.records.append(record)
                    return state.records.count
                }
                if count == stopAfter {
                    state.withLock { $0.end = .stopped }
                    return
                }
            }
            state.withLock { $0.end = Task.isCancelled ? .cancelled : .ended }
        }
    }

    var all: [Recorder.Record] { state.withLock { $0.records } }
    var count: Int { all.count }
    var end: End? { state.withLock { $0.end } }

    /// Until the consumer has heard `count` elements, or `timeout` passed on the check's clock.
    func wait(forCount count: Int, timeout: Duration = .seconds(10)) -> Bool {
        time.waitUntil(timeout: timeout, pacedBy: progress) { self.count >= count }
    }

    /// How far the consumer has got: elements heard, and one more once its loop is over.
    private var progress: () -> Int {
        { [state] in state.withLock { $0.records.count + ($0.end == nil ? 0 : 1) } }
    }

    /// Cancels the consumer's task: it stops waiting for elements.
    func cancel() { task.cancel() }

    /// Waits until the loop is over, however it ended; returns how.
    func waitForEnd(timeout: Duration = .seconds(10)) -> End? {
        _ = time.waitUntil(timeout: timeout, pacedBy: progress) { end != nil }
        return end
    }
}
