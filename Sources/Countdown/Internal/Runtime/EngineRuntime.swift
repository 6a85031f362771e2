import CountdownSupport
import Dispatch
import Foundation

/// Everything the engine takes from the world, through one door: the monotonic clock its
/// delivery side and the ticker pace themselves by, the boot clock the lifecycle reads, the
/// sleep of a drain that lets events gather, the executor that runs deliveries (the delivery
/// queue), the ticker's wake-up timer, the writer's executor, and the thread that makes room
/// ahead. The engine is made with one, as a SwiftNIO channel is with its event loop.
///
/// ``system(deliveryQueue:)`` is the world users run in. ``virtual(_:deliveryQueue:)`` is
/// ``VirtualWorld``'s: a clock that moves only when told, and executors whose jobs wait in
/// lists until the test (or ``VirtualScheduler/advance(by:)``) runs them. The engine's code is
/// the same in both: the drain's linger and turn, the store gate, the room made ahead, the
/// ticker's wake-ups.
///
/// The countdowns' own clocks (wall, continuous, the virtual clock) are the mechanism's: they
/// are part of a strategy, and what it is measured for.
struct EngineRuntime: Sendable {
    /// Where the jobs go.
    enum World: Sendable {
        case system
        case virtual(VirtualWorld)
    }

    /// Observers run here, in the order the table decided their events.
    let deliveryQueue: DispatchQueue
    let world: World

    static func system(deliveryQueue: DispatchQueue) -> EngineRuntime {
        EngineRuntime(deliveryQueue: deliveryQueue, world: .system)
    }

    static func virtual(_ world: VirtualWorld, deliveryQueue: DispatchQueue) -> EngineRuntime {
        EngineRuntime(deliveryQueue: deliveryQueue, world: .virtual(world))
    }

    /// Nanoseconds on the monotonic clock the delivery side paces itself by.
    @inline(__always)
    func monotonic() -> UInt64 {
        switch world {
        case .system: SystemClocks.monotonic()
        case .virtual(let world): world.monotonic
        }
    }

    /// The same, as an instant timers are scheduled at.
    @inline(__always)
    func monotonicInstant() -> MonotonicInstant {
        MonotonicInstant(nanoseconds: monotonic())
    }

    /// Nanoseconds on the boot clock, which counts through a freeze: how long the app was in the
    /// background, for a progress that counts ticks. In virtual time, the virtual clock.
    func bootClock() -> Int64 {
        switch world {
        case .system: SystemClocks.continuous()
        case .virtual(let world): world.nanoseconds
        }
    }

    /// Lets events gather: the real thread sleeps; in virtual time the clock stays where it is
    /// (a test moves it) and the world's sleep hook runs, as another thread would meanwhile.
    func sleep(untilMonotonic deadline: UInt64) {
        switch world {
        case .system: SystemClocks.sleep(untilMonotonic: deadline)
        case .virtual(let world): world.slept(until: deadline)
        }
    }

    /// Runs `job` on the delivery queue, after what is queued there.
    func deliver(_ job: @escaping @Sendable () -> Void) {
        switch world {
        case .system: deliveryQueue.async(execute: job)
        case .virtual(let world): world.enqueue(.delivery, job)
        }
    }

    /// Runs `job` where nothing else wants the core: a thread of its own at idle priority, or,
    /// in virtual time, when the world runs its background jobs.
    func runInBackground(named name: String, _ job: @escaping @Sendable () -> Void) {
        switch world {
        case .system:
            let thread = Thread {
                nameCurrentThread(name)
                lowerCurrentThreadToIdlePriority()
                job()
            }
            thread.qualityOfService = .background
            thread.start()
        case .virtual(let world):
            world.enqueue(.background, job)
        }
    }

    /// A wake-up timer, for a target made after it (its `deinit` nudges the timer to end).
    func makeWakeUpTimer() -> WakeUpTimer {
        switch world {
        case .system: WakeUpTimer(nudger: DispatchSemaphore(value: 0))
        case .virtual: WakeUpTimer(nudger: nil)
        }
    }

    /// Wakes `target` each time its next wake-up comes, on the delivery queue, until it stops or
    /// goes: in the system's world `timer`'s thread, named `name` (at most 15 characters: Linux
    /// refuses longer thread names); in virtual time the world keeps the target, and
    /// ``VirtualWorld/wakeEarliest(through:on:)`` runs its wake-ups on the virtual clock.
    func startWakeUps<Target: WakeUpTarget>(_ timer: WakeUpTimer, for target: Target, named name: String) {
        switch world {
        case .system:
            guard let nudger = timer.nudger else { preconditionFailure("a virtual timer started in the system's world") }
            let box = WeakBox<Target>()
            box.set(target)
            let queue = deliveryQueue
            Thread { WakeUpTimer.run(box, nudger: nudger, queue: queue, name: name) }.start()
        case .virtual(let world):
            world.keep(target)
        }
    }

    /// Where a store's writes run, one at a time.
    func makeWriteExecutor() -> WriteExecutor {
        switch world {
        // Utility, as the system's own background saving: a write is owed within milliseconds,
        // not ahead of the app's work.
        case .system: .queue(DispatchQueue(label: "countdown.store-writer", qos: .utility))
        case .virtual(let world): .virtual(world)
        }
    }
}

/// The serial executor of a store's writes (see ``StoreWriter``).
enum WriteExecutor: Sendable {
    case queue(DispatchQueue)
    case virtual(VirtualWorld)

    /// Runs `job` after the writes queued before it, `rest` nanoseconds later at the earliest
    /// (in virtual time, with no rest: the world runs writes when it is told).
    func write(after rest: UInt64 = 0, _ job: @escaping @Sendable () -> Void) {
        switch self {
        case .queue(let queue) where rest == 0: queue.async(execute: job)
        case .queue(let queue): queue.asyncAfter(deadline: .now() + .nanoseconds(Int(rest)), execute: job)
        case .virtual(let world): world.enqueue(.write, job)
        }
    }

    /// Runs `job` once every write queued before it ran, and returns after it.
    func writeNow(_ job: () -> Void) {
        switch self {
        case .queue(let queue): queue.sync(execute: job)
        case .virtual(let world):
            world.runWrites()
            job()
        }
    }

    /// Returns once `isDone` says so: a real caller waits for the writer's signal; in virtual
    /// time the caller runs the writes itself (nobody else would).
    func wait(until isDone: (_ signal: @escaping @Sendable () -> Void) -> Bool) {
        switch self {
        case .queue:
            let done = DispatchSemaphore(value: 0)
            if !isDone({ done.signal() }) { done.wait() }
        case .virtual(let world):
            let done = Locked(false)
            if !isDone({ done.withLock { $0 = true } }) {
                while !done.withLock({ $0 }) && world.runWrites() > 0 {}
            }
        }
    }
}
