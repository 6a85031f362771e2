import Foundation

/// The whole machine's CPU time so far, from the first line of /proc/stat: busy, idle and
/// steal, in ns summed over every core. Two snapshots and this process's own CPU give a
/// window's ``MachineLoad``.
struct SystemCPUTimes {
    let busy: UInt64
    let idle: UInt64
    let steal: UInt64

    var total: UInt64 { busy + idle + steal }

    /// nil where /proc/stat is missing (not Linux).
    static func now() -> SystemCPUTimes? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first, line.hasPrefix("cpu ")
        else { return nil }
        // user nice system idle iowait irq softirq steal [guest guest_nice, already in user]
        let fields = line.split(separator: " ").dropFirst().compactMap { UInt64($0) }
        guard fields.count >= 8 else { return nil }
        let tick = UInt64(1_000_000_000 / max(sysconf(Int32(_SC_CLK_TCK)), 1))
        return SystemCPUTimes(
            busy: (fields[0] + fields[1] + fields[2] + fields[5] + fields[6]) * tick,
            idle: (fields[3] + fields[4]) * tick,
            steal: fields[7] * tick)
    }

    /// The load between `earlier` and this snapshot, given the CPU this process used in between.
    func load(since earlier: SystemCPUTimes, ownCPU: UInt64, window: UInt64) -> MachineLoad {
        let total = Double(self.total &- earlier.total)
        guard total > 0 else { return MachineLoad(stealPercent: 0, otherProcessesPercent: 0, windowMs: Double(window) / 1e6) }
        let others = max(Double(busy &- earlier.busy) - Double(ownCPU), 0)
        return MachineLoad(
            stealPercent: 100 * Double(steal &- earlier.steal) / total,
            otherProcessesPercent: 100 * others / total,
            windowMs: Double(window) / 1e6)
    }
}
