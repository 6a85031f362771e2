@testable import Countdown
import CountdownSupport
import Dispatch
import Foundation
import Testing

/// The virtual scheduler: its clock moves only by `advance`, everything due is delivered before
/// `advance` returns, in deadline order, at the instant it was due, and two runs agree.
@Suite("Virtual scheduler")
struct VirtualSchedulerTests {
    /// What observers heard, with the clock's reading inside each call.
    final class Log: Sendable {
        private let lines = Locked<[String]>([])
        func observer(_ scheduler: VirtualScheduler) -> CountdownObserver {
            { [weak scheduler] event in
                let at = scheduler?.now ?? .zero
                let what = event.kind == .finished ? "finished" : "\(event.remaining)"
                self.lines.withLock { $0.append("\(at) \(event.key) \(what)") }
            }
        }
        var all: [String] { lines.withLock { $0 } }
    }

    @Test("a 60 s countdown: every tick by advance(by: 59 s), each at its instant, the finish at 60 s")
    func sixtySeconds() throws {
        let s = try VirtualScheduler()
        let log = Log()
        #expect(try s.start(key: "sms-code:+15550100", duration: .seconds(60), observer: log.observer(s)) == .started)
        #expect(log.all.isEmpty, "nothing is delivered behind the test's back")
        try s.advance(by: .seconds(59))
        #expect(log.all.count == 60)
        #expect(log.all.first == "0.0 seconds sms-code:+15550100 60.0 seconds")
        #expect(log.all.last == "59.0 seconds sms-code:+15550100 1.0 seconds")
        #expect(s.remaining(key: "sms-code:+15550100") == .seconds(1))
        #expect(s.now == .seconds(59))
        try s.advance(by: .seconds(1))
        #expect(log.all.last == "60.0 seconds sms-code:+15550100 finished")
        #expect(s.remaining(key: "sms-code:+15550100") == nil)
        #expect(s.activeCount == 0)
    }

    @Test("deadline order across keys, and a countdown that is not a whole number of ticks")
    func deadlineOrder() throws {
        let s = try VirtualScheduler(tickInterval: .seconds(1))
        let log = Log()
        try s.start(key: "b", duration: .milliseconds(2500), observer: log.observer(s))
        try s.advance(by: .milliseconds(300))
        try s.start(key: "a", duration: .seconds(1), observer: log.observer(s))
        try s.advance(by: .seconds(5))
        #expect(log.all == [
            "0.0 seconds b 2.5 seconds",
            "0.3 seconds a 1.0 seconds",
            "1.0 seconds b 1.5 seconds",
            "1.3 seconds a finished",
            "2.0 seconds b 0.5 seconds",
            "2.5 seconds b finished",
        ])
    }

    @Test("pause freezes the clock's effect; the deadline moves by the pause")
    func pauseResume() throws {
        let s = try VirtualScheduler()
        let log = Log()
        try s.start(key: "k", duration: .seconds(3), observer: log.observer(s))
        try s.advance(by: .milliseconds(1500))
        #expect(s.pause(key: "k"))
        try s.advance(by: .seconds(100))
        #expect(s.remaining(key: "k") == .milliseconds(1500))
        #expect(s.resume(key: "k"))
        try s.advance(by: .milliseconds(1499))
        #expect(s.remaining(key: "k") == .milliseconds(1))
        #expect(!log.all.contains { $0.hasSuffix("finished") })
        try s.advance(by: .milliseconds(1))
        #expect(log.all.last == "103.0 seconds k finished")
    }

    @Test("an observer that calls back acts at the instant it was told of")
    func reentrantAtTheInstant() throws {
        let s = try VirtualScheduler()
        let log = Log()
        let record = log.observer(s)
        let refused = Locked<[VirtualTimeError]>([])
        try s.start(key: "first", duration: .seconds(2)) { [weak s] event in
            record(event)
            guard let s, event.kind == .finished else { return }
            _ = try? s.start(key: "second", duration: .seconds(1), observer: record)
            do throws(VirtualTimeError) { try s.advance(by: .seconds(1)) } catch { refused.withLock { $0.append(error) } }
        }
        try s.advance(by: .seconds(10))
        #expect(log.all == [
            "0.0 seconds first 2.0 seconds", "1.0 seconds first 1.0 seconds", "2.0 seconds first finished",
            "2.0 seconds second 1.0 seconds", "3.0 seconds second finished",
        ])
        #expect(refused.withLock { $0 } == [.alreadyAdvancing])
    }

    @Test("bad input is refused and moves nothing")
    func badInput() throws {
        let s = try VirtualScheduler(now: .seconds(5))
        #expect(throws: VirtualTimeError.negativeInterval(.seconds(-1))) { try s.advance(by: .seconds(-1)) }
        #expect(throws: VirtualTimeError.instantInThePast(.seconds(4), now: .seconds(5))) { try s.advance(to: .seconds(4)) }
        #expect(s.now == .seconds(5))
        #expect(throws: CountdownError.self) { try VirtualScheduler(now: .seconds(-1)) }
        #expect(throws: CountdownError.nonPositiveTickInterval(.zero)) { try VirtualScheduler(tickInterval: .zero) }
    }

    @Test("two runs of the same calls deliver the same events in the same order")
    func deterministic() throws {
        func run() throws -> [String] {
            let s = try VirtualScheduler(tickInterval: .milliseconds(250))
            let log = Log()
            for index in 0..<200 {
                try s.start(key: "rate-limit:user:\(100_000 + index)", duration: .milliseconds(100 + 37 * Int64(index % 23)),
                            observer: log.observer(s))
                if index % 7 == 0 { _ = s.pause(key: "rate-limit:user:\(100_000 + index / 2)") }
                if index % 11 == 0 { _ = s.resume(key: "rate-limit:user:\(100_000 + index / 3)") }
                if index % 13 == 0 { _ = s.cancel(key: "rate-limit:user:\(100_000 + index / 4)") }
                try s.advance(by: .milliseconds(Int64(index % 5) * 10))
            }
            for key in s.activeKeys { _ = s.resume(key: key) }
            try s.advance(by: .seconds(10))
            return log.all
        }
        let first = try run(), second = try run()
        #expect(first.count > 500)
        #expect(first == second)
    }

    @Test("a test on the main actor with the main queue: advance delivers in place") @MainActor
    func mainQueue() throws {
        let s = try VirtualScheduler(deliveryQueue: .main)
        var heard: [Duration] = []
        try s.start(key: "k", duration: .seconds(3)) { event in
            MainActor.assumeIsolated { heard.append(event.remaining) }
        }
        try s.advance(by: .seconds(3))
        #expect(heard == [.seconds(3), .seconds(2), .seconds(1), .zero])
    }

    @Test("events(key:) in virtual time: the stream hears what advance delivers")
    func events() async throws {
        let s = try VirtualScheduler()
        try s.start(key: "k", duration: .seconds(2)) { _ in }
        let stream = s.events(key: "k")
        try s.advance(by: .seconds(5))
        var seen: [CountdownEvent.Kind] = []
        for await event in stream { seen.append(event.kind) }
        #expect(seen == [.tick, .tick, .finished])
    }

    @Test("killed and relaunched from its store: the countdown comes back with the time left")
    func relaunch() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("virtual-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("countdowns.store").path

        var killedAt = Duration.zero
        do {
            let first = try VirtualScheduler()
            try first.restore(from: first.store(path: path))
            try first.start(key: "sms-code:+15550100", duration: .seconds(60)) { _ in }
            try first.start(key: "sms-code:+15550199", duration: .seconds(5)) { _ in }
            try first.advance(by: .seconds(30))
            first.enteredBackground()  // the file holds every change: the app may be killed now
            killedAt = first.now
        }  // released: killed
        let relaunched = try VirtualScheduler(now: killedAt + .seconds(10))
        let restoration = try relaunched.restore(from: relaunched.store(path: path))
        #expect(restoration.running == ["sms-code:+15550100": .seconds(20)])
        let log = Log()
        #expect(relaunched.attach(key: "sms-code:+15550100", observer: log.observer(relaunched)) == .seconds(20))
        try relaunched.advance(by: .seconds(20))
        #expect(log.all.first == "40.0 seconds sms-code:+15550100 20.0 seconds")
        #expect(log.all.last == "60.0 seconds sms-code:+15550100 finished")
    }

    @Test("shutdown forgets what was due; advance after it delivers nothing")
    func shutdown() throws {
        let s = try VirtualScheduler()
        let log = Log()
        try s.start(key: "k", duration: .seconds(5), observer: log.observer(s))
        s.shutdown()
        try s.advance(by: .seconds(10))
        #expect(log.all.isEmpty)
        #expect(throws: CountdownError.shutDown) { try s.start(key: "k", duration: .seconds(1)) { _ in } }
    }
}
