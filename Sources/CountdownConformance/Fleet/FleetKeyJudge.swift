import Countdown
import CountdownSupport

/// Judges one key of a fleet trial: is there an order of its calls, each placed between its
/// own beginning and end (linearizability, as Jepsen's checkers judge a history), that explains
/// every answer and every event? Events are judged with one-sided bounds against that order:
/// an observer replaced, cancelled or paused hears nothing that begins more than ``bound``
/// after the call that did it returned; the last observer of a countdown that ran out hears its
/// finish once, never before the deadline; no one else hears a finish.
struct FleetKeyJudge {
    /// The calls that raced on the key, in the order they began.
    let calls: [FleetHistory.Call]
    /// The call the trial made after the race to end what was left.
    let cleanup: FleetHistory.Call?
    let events: [Int: [FleetHistory.Event]]
    let killed: [Int: UInt64]
    let bound: UInt64

    /// What one order implies, and what the events show against it.
    struct Finding {
        var violations: [String] = []
        var owed = 0, heard = 0, lost = 0, early = 0, doubled = 0, stale = 0
        /// The latest a replaced, cancelled or paused observer heard a tick after the call that did it returned.
        var latestAfterEnd: UInt64 = 0
    }

    /// The best order's finding (none violated, if one explains everything); nil when no order
    /// explains the answers alone.
    func judge() -> Finding? {
        var best: Finding?
        var model = FleetModel()
        var placed = [Bool](repeating: false, count: calls.count)
        search(&model, &placed, &best)
        return best
    }

    private func isPending(_ call: FleetHistory.Call) -> Bool { call.returned == nil || call.answer == nil }

    private func search(_ model: inout FleetModel, _ placed: inout [Bool], _ best: inout Finding?) {
        if let found = best, found.violations.isEmpty { return }
        if !calls.indices.contains(where: { !placed[$0] && !isPending(calls[$0]) }) {
            let finding = evaluate(model)
            if best == nil || finding.violations.count < best!.violations.count { best = finding }
            if finding.violations.isEmpty { return }
        }
        for index in calls.indices where !placed[index] {
            // Every call that returned before this one began comes first.
            let call = calls[index]
            guard !calls.indices.contains(where: { other in
                !placed[other] && other != index && calls[other].returned.map { $0 < (call.earliest ?? .max) } == true
            }) else { continue }
            var next = model
            guard next.apply(index, call) else { continue }
            placed[index] = true
            search(&next, &placed, &best)
            placed[index] = false
            if let found = best, found.violations.isEmpty { return }
        }
    }

    /// What the events show against the order `model` was applied in.
    private func evaluate(_ model: FleetModel) -> Finding {
        var f = Finding()
        for (number, generation) in model.generations.enumerated() {
            // Only the last countdown can still run when the race is over; it runs out then.
            let final = number == model.generations.count - 1 && model.phase == .running
            var finishes = 0
            for observer in generation.observers {
                let call = calls[observer]
                let heard = events[call.id] ?? []
                let finishesHere = heard.filter { $0.kind == .finished }
                finishes += finishesHere.count
                let exempt = call.answer == nil || call.answer!.isFailure || killed[call.member] != nil
                if !exempt { firstTick(call, heard, &f) }
                let lastOne = observer == generation.observers.last
                if final && lastOne {
                    // A finish to a member killed meanwhile, or to a call that failed, was owed to no one:
                    // "heard" counts owed finishes only, so that it reads as "N of M owed".
                    if !exempt { owedFinish(generation, call, finishesHere, &f) }
                } else if !finishesHere.isEmpty {
                    f.violations.append("\(describe(call)) heard a finish, but \(endText(observer, model)): the finish was not its")
                }
                silence(observer, call, heard, generation, model, &f)
            }
            if finishes > 1 {
                f.doubled += 1
                f.violations.append("the countdown started by \(describe(calls[generation.start])) finished \(finishes) times")
            }
        }
        if let cleanup, let answer = cleanup.answer, !answer.isFailure {
            let expected: FleetHistory.Call.Answer = model.phase == .paused ? .yes : .no
            if answer != expected {
                f.violations.append(model.phase == .paused
                    ? "the paused countdown was gone when the trial cancelled it after the race (cancel answered false)"
                    : "a countdown was still there when the trial cancelled it, \(Self.ms(cleanup.invoked.map { $0 &- (calls.first?.invoked ?? 0) } ?? 0)) after the race began, past its deadline: its finish was lost or very late")
            }
        }
        return f
    }

    /// The first event of a call's observer is a tick with what the call answered.
    private func firstTick(_ call: FleetHistory.Call, _ heard: [FleetHistory.Event], _ f: inout Finding) {
        let told: Int64
        switch call.answer {
        case .started: told = call.duration
        case .attached(let remaining): told = remaining
        default: return
        }
        guard let first = heard.first else {
            f.violations.append("\(describe(call)) answered \(call.answer!.text) and its observer heard nothing, not a first tick")
            return
        }
        if first.kind != .tick || first.remaining != told {
            f.violations.append("\(describe(call)) answered \(call.answer!.text), and its observer's first event was \(first.kind == .tick ? "a tick of \(first.remaining) ns" : "the finish"), not a tick of \(told) ns")
        }
    }

    /// The countdown ran out: its last observer hears the finish once, never before the deadline.
    private func owedFinish(_ generation: FleetModel.Generation, _ call: FleetHistory.Call, _ finishes: [FleetHistory.Event], _ f: inout Finding) {
        f.owed += 1
        guard let finish = finishes.first else {
            f.lost += 1
            f.violations.append("\(describe(call)) was the countdown's last observer and never heard its finish")
            return
        }
        f.heard += 1
        var deadline = (calls[generation.start].earliest ?? 0) + UInt64(generation.duration)
        for (pause, resume) in generation.pauses {
            if let resume, let resumed = calls[resume].invoked, let paused = calls[pause].returned, resumed > paused {
                deadline += resumed - paused
            }
        }
        if finish.at + ClockAllowance.fleet < deadline {
            f.early += 1
            f.violations.append("\(describe(call)) heard the finish \(Self.ms(deadline - finish.at)) before the earliest deadline the calls allow")
        }
    }

    /// Once replaced, cancelled or paused, an observer hears no tick that begins more than the
    /// bound after the call that did it (or its own, if that returned later) returned.
    private func silence(
        _ observer: Int, _ call: FleetHistory.Call, _ heard: [FleetHistory.Event], _ generation: FleetModel.Generation,
        _ model: FleetModel, _ f: inout Finding
    ) {
        guard let own = call.returned, let position = model.position(of: observer) else { return }
        var end: (call: FleetHistory.Call, position: Int)?
        if let ender = model.endedBy[observer] {
            end = (calls[ender], model.position(of: ender) ?? .max)
        } else if model.current == observer, model.phase == .paused, let cleanup, cleanup.answer == .yes {
            end = (cleanup, .max)
        }
        var quiet: [(from: UInt64, until: UInt64, what: String)] = []
        if let end, let returned = end.call.returned {
            quiet.append((max(returned, own), .max, endText(observer, model, cleanupEnded: end.position == .max)))
        }
        for (pause, resume) in generation.pauses {
            guard let at = model.position(of: pause), at > position, at < (end?.position ?? .max),
                  let paused = calls[pause].returned else { continue }
            let until = resume.flatMap { calls[$0].earliest } ?? end?.call.earliest ?? cleanup?.earliest ?? .max
            quiet.append((max(paused, own), until, "\(describe(calls[pause])) paused it"))
        }
        for (from, until, what) in quiet {
            for tick in heard where tick.kind == .tick && tick.at > from && tick.at < until {
                f.latestAfterEnd = max(f.latestAfterEnd, tick.at - from)
                if tick.at > from + bound {
                    f.stale += 1
                    f.violations.append("\(describe(call)): a tick began \(Self.ms(tick.at - from)) after \(what) (bound \(Self.ms(bound)))")
                }
            }
        }
    }

    private func endText(_ observer: Int, _ model: FleetModel, cleanupEnded: Bool = false) -> String {
        if cleanupEnded { return "the trial cancelled the paused countdown" }
        guard let ender = model.endedBy[observer] else { return "it was not the countdown's last observer" }
        let call = calls[ender]
        return call.operation == .cancel ? "\(describe(call)) cancelled it" : "\(describe(call)) attached another observer"
    }

    func describe(_ call: FleetHistory.Call) -> String {
        "member \(call.member)'s \(call.operation.rawValue) #\(call.id) of \(KeyText.describe(call.key))"
    }

    static func ms(_ nanoseconds: UInt64) -> String { DurationText.nanoseconds(Double(nanoseconds)) }
}
