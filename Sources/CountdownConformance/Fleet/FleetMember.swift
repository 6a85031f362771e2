import Countdown
import CountdownSupport
import Dispatch
import Foundation
import Synchronization

/// One member of a fleet trial, in a process of its own: the test binary (or any executable
/// that runs the suite) started again with ``CountdownConformance/fleetMemberVariable`` naming
/// the suite. It makes one scheduler from the suite's factory, on the namespace and store the
/// trial names, then makes the calls the trial sends on its standard input, each at the instant
/// asked, and writes every answer and every event it hears, with `CLOCK_MONOTONIC` instants, on
/// its standard output (lines tagged ``tag``, among whatever else the process prints).
///
/// Lines in: `call <id> <operation> <duration ns> <at ns> <key>`, `census <timeout ms>`, `quit`.
/// Lines out: `ready`, `R <id> <invoked> <returned> <answer>`, `E <observer> <t|f> <remaining>
/// <at>`, `C <observers still held> <their ids…>`, `failed <why>`.
enum FleetMember {
    static let tag = "countdown-fleet-member:"
    /// `<namespace> <tick ns> <store address or ->`.
    static let setupVariable = "COUNTDOWN_CONFORMANCE_FLEET_SETUP"
    /// Calls run on this many threads, each sleeping until its call's instant.
    static let callThreads = 8

    private static let serving = Atomic<Bool>(false)

    /// In a process started as a member of `name`'s trial: serves, and never returns (the first
    /// caller serves; any other waits with it). Elsewhere: returns at once.
    static func serveIfAsked(name: String, factory: CountdownConformance.Factory) {
        guard let asked = ProcessInfo.processInfo.environment[CountdownConformance.fleetMemberVariable], asked == name else { return }
        if serving.exchange(true, ordering: .acquiringAndReleasing) {
            while true { sleep(3600) }
        }
        serve(factory: factory)
    }

    private static func serve(factory: CountdownConformance.Factory) -> Never {
        let output = Output()
        let setup = (ProcessInfo.processInfo.environment[setupVariable] ?? "").split(separator: " ").map(String.init)
        guard setup.count == 3, let tick = Int64(setup[1]) else {
            output.say("failed no setup in \(setupVariable)")
            exit(2)
        }
        let queue = DispatchQueue(label: "countdown.fleet-member.delivery")
        let scheduler: any CountdownScheduler
        do {
            scheduler = try factory(.init(
                tickInterval: .nanoseconds(tick), deliveryQueue: queue, wallClock: MovableWallClock().clock,
                namespace: setup[0], storeAddress: setup[2] == "-" ? nil : setup[2]))
        } catch {
            output.say("failed \(error)")
            exit(1)
        }
        let member = Member(scheduler: scheduler, queue: queue, output: output)
        for _ in 0..<callThreads { OSThreads.start("conformance-member") { member.runCalls() } }
        output.say("ready")
        while let line = readLine() {
            let fields = line.split(separator: " ", maxSplits: 5).map(String.init)
            switch fields.first {
            case "call" where fields.count == 6:
                guard let id = Int(fields[1]), let operation = FleetHistory.Call.Operation(rawValue: fields[2]),
                      let duration = Int64(fields[3]), let at = UInt64(fields[4]) else { continue }
                member.enqueue(Member.Call(id: id, operation: operation, duration: duration, at: at, key: fields[5]))
            case "census" where fields.count == 2:
                let held = member.census(timeout: .milliseconds(Int64(fields[1]) ?? 5000))
                output.say((["C", String(held.count)] + held.map(String.init)).joined(separator: " "))
            case "quit":
                scheduler.shutdown()
                queue.sync {}
                output.say("bye")
                exit(0)
            default:
                continue
            }
        }
        exit(0)  // the trial went away
    }

    /// Whole lines on standard output, one writer at a time.
    final class Output: Sendable {
        private let lock = Locked(())

        func say(_ line: String) {
            let data = Data("\(FleetMember.tag) \(line)\n".utf8)
            lock.withLock { _ in FileHandle.standardOutput.write(data) }
        }
    }

    /// The member's scheduler, its calls waiting for their instants, and its observers, watched
    /// without being kept alive.
    final class Member: Sendable {
        struct Call: Sendable {
            let id: Int
            let operation: FleetHistory.Call.Operation
            let duration: Int64
            let at: UInt64
            let key: String
        }

        let scheduler: any CountdownScheduler
        let queue: DispatchQueue
        let output: Output
        private let waiting = Locked<[Call]>([])
        private let ready = DispatchSemaphore(value: 0)
        private let observers = Locked<[Int: Watched]>([:])

        init(scheduler: any CountdownScheduler, queue: DispatchQueue, output: Output) {
            self.scheduler = scheduler
            self.queue = queue
            self.output = output
        }

        func enqueue(_ call: Call) {
            waiting.withLock { $0.append(call) }
            ready.signal()
        }

        /// On a call thread: the calls in the order they came, each at its instant.
        func runCalls() {
            while true {
                ready.wait()
                guard let call = waiting.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                SystemClocks.sleep(untilMonotonic: call.at)
                let invoked = SystemClocks.monotonic()
                let answer = make(call)
                let returned = SystemClocks.monotonic()
                output.say("R \(call.id) \(invoked) \(returned) \(answer.text)")
            }
        }

        private func make(_ call: Call) -> FleetHistory.Call.Answer {
            switch call.operation {
            case .start:
                do {
                    switch try scheduler.start(key: call.key, duration: .nanoseconds(call.duration), observer: observer(call.id)) {
                    case .started: return .started
                    case .attached(let remaining): return .attached(remaining: remaining.nanoseconds)
                    }
                } catch {
                    return .failed("\(error)")
                }
            case .attach:
                guard let remaining = scheduler.attach(key: call.key, observer: observer(call.id)) else { return .nothing }
                return .attached(remaining: remaining.nanoseconds)
            case .cancel: return scheduler.cancel(key: call.key) ? .yes : .no
            case .pause: return scheduler.pause(key: call.key) ? .yes : .no
            case .resume: return scheduler.resume(key: call.key) ? .yes : .no
            }
        }

        /// An observer that writes what it hears, stamped inside the callback; the member keeps
        /// only a weak reference to what it holds, so that the census sees what the scheduler keeps.
        private func observer(_ id: Int) -> CountdownObserver {
            let token = Token()
            observers.withLock { $0[id] = Watched(token) }
            return { [output] event in
                let at = SystemClocks.monotonic()
                withExtendedLifetime(token) {
                    output.say("E \(id) \(event.kind == .finished ? "f" : "t") \(event.remaining.nanoseconds) \(at)")
                }
            }
        }

        /// The observers (their calls' ids) the scheduler still holds, once its delivery queue has
        /// run what was queued and at most `timeout` has passed for the rest to be let go.
        func census(timeout: Duration) -> [Int] {
            queue.sync {}
            var alive: [Int] = []
            _ = realTimeWait(timeout: timeout) {
                queue.sync {}
                alive = observers.withLock { $0.filter { $0.value.isAlive }.map(\.key).sorted() }
                return alive.isEmpty
            }
            return alive
        }
    }
}
