#if Redis
import Countdown
import CountdownRedis
import CountdownSupport
import Dispatch

/// A `RedisCountdownScheduler` whose protocol calls are all made through `scheduler.async`: each
/// a task that the calling thread waits for. What the suite judges to judge the async calls
/// (the same ``FleetCall``s as the blocking ones, run by a task: it suspends while Redis answers).
final class AsyncCallingScheduler: CountdownScheduler {
    let base: RedisCountdownScheduler

    init(_ base: RedisCountdownScheduler) { self.base = base }

    var profile: CountdownProfile { base.profile }
    var tickInterval: Duration { base.tickInterval }
    var deliveryQueue: DispatchQueue { base.deliveryQueue }

    func start(key: String, duration: Duration, observer: @escaping CountdownObserver) throws(CountdownError) -> CountdownStart {
        try Self.wait { [base] () async throws(CountdownError) in try await base.async.start(key: key, duration: duration, observer: observer) }
    }

    func attach(key: String, observer: @escaping CountdownObserver) -> Duration? {
        (try? Self.wait { [base] () async throws(CountdownError) in try await base.async.attach(key: key, observer: observer) }) ?? nil
    }

    func events(key: String) -> AsyncStream<CountdownEvent> {
        (try? Self.wait { [base] () async throws(CountdownError) in try await base.async.events(key: key) }) ?? AsyncStream { $0.finish() }
    }

    func cancel(key: String) -> Bool { (try? Self.wait { [base] () async throws(CountdownError) in try await base.async.cancel(key: key) }) ?? false }
    func pause(key: String) -> Bool { (try? Self.wait { [base] () async throws(CountdownError) in try await base.async.pause(key: key) }) ?? false }
    func resume(key: String) -> Bool { (try? Self.wait { [base] () async throws(CountdownError) in try await base.async.resume(key: key) }) ?? false }
    func remaining(key: String) -> Duration? {
        (try? Self.wait { [base] () async throws(CountdownError) in try await base.async.remaining(key: key) }) ?? nil
    }
    var activeKeys: [String] { (try? Self.wait { [base] () async throws(CountdownError) in try await base.async.activeKeys() }) ?? [] }
    var activeCount: Int { (try? Self.wait { [base] () async throws(CountdownError) in try await base.async.activeCount() }) ?? 0 }
    func enteredBackground() { base.enteredBackground() }
    func enteredForeground() { base.enteredForeground() }
    func shutdown() { base.shutdown() }

    /// `body` as a task, this thread waiting for its answer.
    private static func wait<T: Sendable>(_ body: @escaping @Sendable () async throws(CountdownError) -> T) throws(CountdownError) -> T {
        let result = Locked<Result<T, CountdownError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let outcome: Result<T, CountdownError>
            do throws(CountdownError) {
                outcome = .success(try await body())
            } catch {
                outcome = .failure(error)
            }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.get()
    }
}
#endif
