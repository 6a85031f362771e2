import Countdown
import CountdownSupport
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension CountdownConformance {
    /// The environment variable that tells a relaunched test binary to act as the worker of the
    /// suspension check whose suite has this name.
    public static let suspensionWorkerVariable = "COUNTDOWN_CONFORMANCE_SUSPENSION_WORKER"

    /// Judges what the backend declares about a frozen process (`CountdownProfile.suspension`)
    /// by freezing it: the test binary is started again as a child process (`relaunch` says
    /// how) that runs one countdown on a scheduler from this suite's factory; the child is
    /// stopped with `SIGSTOP` for `freeze` and continued with `SIGCONT`, and its finish is
    /// compared with the deadline. Finishing about `freeze` late is `late-by-freeze`; on time,
    /// `keeps-deadline`; in between, inconclusive. A declaration the child contradicts fails.
    ///
    /// ```swift
    /// @Test func frozen() {
    ///     let suite = CountdownConformance(name: "my-backend") { try MyScheduler($0) }
    ///     let result = suite.suspension(relaunch: .swiftTesting("MyTests/frozen"))
    ///     #expect(result.verdict != .fail, "\(result.messages)")
    /// }
    /// ```
    ///
    /// A backend that runs in virtual time (`VirtualTimeScheduling`) is "not applicable", as
    /// every check that needs the real world is there: its clock moves only when it is
    /// advanced, so a frozen process moves nothing it counts.
    ///
    /// In the child (the same test, run again with ``suspensionWorkerVariable`` set to this
    /// suite's name) the call acts as the worker and ends the process when the countdown
    /// finishes: it never returns there. A suite of another name in the child returns "not
    /// applicable" at once. Where processes cannot be started and stopped, the result is "not
    /// applicable", never a pass.
    public func suspension(relaunch: Relaunch, freeze: Duration = .seconds(1)) -> CheckResult {
        FleetMember.serveIfAsked(name: name, factory: factory)
        let began = SystemClocks.monotonic()
        var verdict: CheckResult.Verdict = .pass
        var messages: [String] = []
        var figure: String?
        func result() -> CheckResult {
            CheckResult(id: "profile.suspension", kind: .profile, verdict: verdict, figure: figure, messages: messages,
                        seconds: Double(SystemClocks.monotonic() - began) / 1e9, time: .real)
        }
        #if os(Linux) || os(macOS)
        if let worker = ProcessInfo.processInfo.environment[Self.suspensionWorkerVariable] {
            guard worker == name else {
                verdict = .notApplicable
                messages = ["the worker of \(worker)'s suspension check runs in this process"]
                return result()
            }
            FrozenChild.work(factory: factory)  // never returns
        }
        if let why = virtualTime() {
            verdict = .notApplicable
            messages = [why]
            return result()
        }
        let outcome = FrozenChild.judge(name: name, relaunch: relaunch, freeze: freeze)
        verdict = outcome.verdict
        messages = outcome.messages
        figure = outcome.figure
        #else
        verdict = .notApplicable
        messages = ["this platform cannot start and stop a child process"]
        #endif
        return result()
    }
}

extension CountdownConformance {
    /// Why the suspension check does not apply, when the factory's scheduler runs in virtual
    /// time: one is made to look, and shut down at once.
    fileprivate func virtualTime() -> String? {
        let environment = Environment(
            tickInterval: FrozenChild.tick, deliveryQueue: DispatchQueue(label: "countdown.suspension-probe"),
            wallClock: MovableWallClock().clock, namespace: Harness.freshNamespace())
        guard let probe = try? factory(environment) else { return nil }
        defer { probe.shutdown() }
        guard probe is any VirtualTimeScheduling else { return nil }
        return "not in virtual time: it freezes a process while real time passes, and a virtual clock moves only when it is advanced"
    }
}

#if os(Linux) || os(macOS)
/// The suspension check's two sides: the worker in the child, and the parent that freezes it.
enum FrozenChild {
    static let tick = Duration.milliseconds(100), duration = Duration.seconds(2)
    /// Marks the worker's lines among whatever else the test binary prints.
    static let tag = "countdown-suspension-worker:"

    /// In the child: one countdown, every event printed with the monotonic clock, then exit.
    static func work(factory: CountdownConformance.Factory) -> Never {
        @Sendable func say(_ line: String) { FileHandle.standardOutput.write(Data("\(tag) \(line)\n".utf8)) }
        let finished = DispatchSemaphore(value: 0)
        do {
            let queue = DispatchQueue(label: "countdown.suspension-worker")
            let scheduler = try factory(.init(
                tickInterval: tick, deliveryQueue: queue, wallClock: MovableWallClock().clock, namespace: Harness.freshNamespace()))
            say("declared \(scheduler.profile.suspension.rawValue)")
            let start = SystemClocks.monotonic()
            try scheduler.start(key: "suspension", duration: duration) { event in
                let at = SystemClocks.monotonic()
                say(event.kind == .finished ? "finish \(at)" : "tick \(event.remaining.nanoseconds) \(at)")
                if event.kind == .finished { finished.signal() }
            }
            say("started \(start)")
            _ = finished.wait(timeout: .now() + .seconds(120))
            exit(0)
        } catch {
            say("failed \(error)")
            exit(1)
        }
    }

    struct Outcome {
        var verdict: CheckResult.Verdict = .pass
        var messages: [String] = []
        var figure: String?
    }

    /// In the parent: starts the child, freezes it after two ticks, and judges its finish.
    static func judge(name: String, relaunch: CountdownConformance.Relaunch, freeze: Duration) -> Outcome {
        var outcome = Outcome()
        func fail(_ message: String) -> Outcome {
            outcome.verdict = .fail
            outcome.messages.append(message)
            return outcome
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: relaunch.executable)
        process.arguments = relaunch.arguments
        var environment = ProcessInfo.processInfo.environment
        environment[CountdownConformance.suspensionWorkerVariable] = name
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let lines = Locked<[String]>([])
        let reader = Thread {
            var pending = Data()
            while true {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    if line.hasPrefix(tag) { lines.withLock { $0.append(String(line.dropFirst(tag.count + 1))) } }
                }
            }
        }
        do { try process.run() } catch { return fail("could not start \(relaunch.executable): \(error)") }
        reader.start()
        defer { if process.isRunning { process.terminate() } }
        func field(_ prefix: String) -> [String]? {
            lines.withLock { $0.first { $0.hasPrefix(prefix + " ") } }?.split(separator: " ").dropFirst().map(String.init)
        }
        let ticksSeen = { lines.withLock { $0.filter { $0.hasPrefix("tick ") }.count } }
        guard realTimeWait(timeout: .seconds(60), { ticksSeen() >= 3 || field("failed") != nil || !process.isRunning }),
              ticksSeen() >= 3
        else {
            let said = lines.withLock { $0 }
            return fail("the relaunched worker (\(relaunch.executable) \(relaunch.arguments.joined(separator: " "))) never ticked twice: it said \(said.isEmpty ? "nothing (does the relaunch run the test that calls suspension(relaunch:)?)" : said.joined(separator: "; "))")
        }
        kill(process.processIdentifier, SIGSTOP)
        Thread.sleep(forTimeInterval: freeze.seconds)
        kill(process.processIdentifier, SIGCONT)
        let budget = duration + freeze * 3 + .seconds(20)
        guard realTimeWait(timeout: budget, { field("finish") != nil }),
              let declared = field("declared")?.first.flatMap(CountdownProfile.Suspension.init(rawValue:)),
              let started = field("started")?.first.flatMap(UInt64.init),
              let finished = field("finish")?.first.flatMap(UInt64.init)
        else {
            return fail("the frozen worker never reported its finish within \(budget) of the freeze: it said \(lines.withLock { $0 }.joined(separator: "; "))")
        }
        process.waitUntilExit()
        let deadline = started + UInt64(duration.nanoseconds)
        let late = Int64(finished) - Int64(deadline)
        let lateText = late >= 0 ? "\(DurationText.nanoseconds(Double(late))) after" : "\(DurationText.nanoseconds(Double(-late))) before"
        let freezeNs = freeze.nanoseconds
        let observed: CountdownProfile.Suspension? =
            late >= freezeNs / 2 ? .finishesLateByFreeze : late <= freezeNs / 4 ? .keepsDeadline : nil
        outcome.figure = "frozen \(freeze) with SIGSTOP after two ticks of a \(duration) countdown: finished \(lateText) its deadline (declares \(declared.rawValue))"
        // A worker in another process; a fleet's deadline is its store's clock: the wider allowance.
        if late < -Int64(ClockAllowance.fleet) {
            return fail("the frozen worker finished \(lateText) its deadline: early")
        }
        guard let observed else {
            outcome.verdict = .inconclusive
            outcome.messages.append("finished \(lateText) its deadline after a \(freeze) freeze: between on time and late by the freeze")
            return outcome
        }
        if observed != declared {
            return fail("declares \(declared.rawValue), but frozen \(freeze) it finished \(lateText) its deadline: \(observed.rawValue)")
        }
        return outcome
    }
}
#endif
