/// An ``Outcome`` in words, one line: "complete", or what the time limit cut off and why, and
/// every breach of the contract.
enum OutcomeText {
    static func describe(_ o: Outcome) -> String {
        var parts: [String] = []
        if let c = o.cutOff {
            parts.append("time limit \(ReportFormat.milliseconds(c.limitMs)): \(c.finished) of \(c.countdowns) finished")
            if c.notStarted > 0 {
                parts.append("\(c.notStarted) never started (start calls took \(ReportFormat.milliseconds(c.startPhaseMs)))")
            }
            if let late = c.lateStartsPercent, late >= 0.5 {
                parts.append("\(ReportFormat.percent(late)) started more than one tick late")
            }
            if let delay = c.startDelayP50Ms {
                parts.append("median start delay \(c.startDelayIsLowerBound ? "≥ " : "")\(ReportFormat.milliseconds(delay))")
            }
        } else {
            parts.append("complete")
        }
        if o.skippedTicks > 0 { parts.append("\(o.skippedTicks) ticks skipped (caught up)") }
        return (parts + breaches(o)).joined(separator: "; ")
    }

    /// Every breach of the contract, and every error `start` threw, a phrase each.
    static func breaches(_ o: Outcome) -> [String] {
        var parts: [String] = []
        if o.earlyEvents > 0 {
            parts.append("\(o.earlyEvents) events EARLY (\(o.earlyFinishes) of them finishes; by up to \(ReportFormat.milliseconds(-o.earliestMs)))")
        }
        if o.doubledFinishes > 0 { parts.append("\(o.doubledFinishes) finishes DOUBLED") }
        if o.eventsAfterFinish > 0 { parts.append("\(o.eventsAfterFinish) events AFTER a finish") }
        for (error, times) in o.startErrors.sorted(by: { $0.key < $1.key }) { parts.append("start threw \(times)×: \(error)") }
        return parts
    }

    /// A configuration's outcome, with the noise and busy-machine flags in front.
    /// With NOISY or DISTURBED, what explains it: the floor in each repeat's window and the
    /// largest steal.
    static func describe(_ c: RunDocument.Configuration) -> String {
        var flags: [String] = []
        if c.isNoisy, let r = c[.tickP99]?.repeats {
            flags.append("NOISY (repeats' p99 \(ReportFormat.milliseconds(r.min))–\(ReportFormat.milliseconds(r.max)))")
        }
        if c.isDisturbed { flags.append("DISTURBED") }
        if c.isNoisy || c.isDisturbed {
            let floors = c.repeats.compactMap(\.windowFloorP99)
            if let low = floors.min(), let high = floors.max() {
                flags.append("window floor p99 \(ReportFormat.milliseconds(low))–\(ReportFormat.milliseconds(high))")
            }
            let steal = c.repeats.compactMap { $0.load?.stealPercent }.max()
            if let steal { flags.append("steal ≤ \(ReportFormat.percent(steal))") }
        }
        if let load = c.load, load.isBusy { flags.append(LoadText.describe(load)) }
        return (flags + [describe(c.outcome)] + starvedPool(c)).joined(separator: "; ")
    }

    /// Why a configuration was cut off when libdispatch's pool had no thread to spare: every
    /// queue and task in the process waits for one (the task backend's wake-ups, the delivery
    /// queue's blocks), and a probe block waited this long.
    private static func starvedPool(_ c: RunDocument.Configuration) -> [String] {
        guard c.outcome.cutOff != nil, let wait = c[.poolWait], wait.value >= 10 else { return [] }
        let bound = wait.isLowerBound ? "≥ " : ""
        return ["libdispatch's pool starved: a block waited \(bound)\(ReportFormat.milliseconds(wait.value)) for a thread (pool wait p99)"]
    }
}

/// A ``MachineLoad`` in words.
enum LoadText {
    static func describe(_ load: MachineLoad) -> String {
        let busy = load.isBusy ? "BUSY MACHINE: " : ""
        return "\(busy)steal \(ReportFormat.percent(load.stealPercent)), other processes \(ReportFormat.percent(load.otherProcessesPercent))"
    }
}
