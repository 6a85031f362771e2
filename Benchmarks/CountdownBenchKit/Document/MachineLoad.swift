/// What the rest of the machine did during a window, from /proc/stat: time the hypervisor gave
/// to other guests (steal) and time other processes used, each as a share of every core's
/// time. A run made on a busy machine says so.
struct MachineLoad: Codable, Sendable, Equatable {
    /// Steal time over all cores, %.
    let stealPercent: Double
    /// Busy time of other processes over all cores, % (the machine's busy time less this
    /// process's CPU).
    let otherProcessesPercent: Double
    /// How long the windows lasted, ms.
    let windowMs: Double

    /// Steal above this share, or other processes above `busyOthers`, and the machine was not
    /// quiet enough for its figures to be taken alone.
    static let busySteal = 5.0
    static let busyOthers = 10.0

    var isBusy: Bool { stealPercent >= Self.busySteal || otherProcessesPercent >= Self.busyOthers }

    /// Several windows as one, weighted by their lengths.
    static func combined(_ loads: [MachineLoad]) -> MachineLoad? {
        let total = loads.reduce(0) { $0 + $1.windowMs }
        guard total > 0 else { return loads.first }
        return MachineLoad(
            stealPercent: loads.reduce(0) { $0 + $1.stealPercent * $1.windowMs } / total,
            otherProcessesPercent: loads.reduce(0) { $0 + $1.otherProcessesPercent * $1.windowMs } / total,
            windowMs: total)
    }
}
