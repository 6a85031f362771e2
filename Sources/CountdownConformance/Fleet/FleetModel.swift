/// The contract's model of one key of a fleet, for the judge: what each call answers and
/// leaves, applied one call at a time in an order the judge chooses. Observers are named by the
/// index of the call that made them (a start or an attach).
struct FleetModel {
    enum Phase { case free, running, paused }

    /// One countdown: from the call that started it to its end.
    struct Generation {
        let start: Int
        let duration: Int64
        /// Each pause, and the resume that ended it (nil: paused still).
        var pauses: [(pause: Int, resume: Int?)] = []
        /// Its observers, in the order they attached.
        var observers: [Int]
        /// The cancel that ended it (nil: it ran to its finish, or is paused still).
        var cancelledBy: Int?
    }

    private(set) var phase: Phase = .free
    private(set) var generations: [Generation] = []
    /// The observer now.
    private(set) var current: Int?
    /// Each replaced or cancelled observer, with the call that ended it.
    private(set) var endedBy: [Int: Int] = [:]
    /// Each call applied, with its place in the order.
    private(set) var order: [Int] = []

    /// Applies call `index`; false when its answer is not the one the model gives (an answer
    /// of nil is unknown, and fits any).
    mutating func apply(_ index: Int, _ call: FleetHistory.Call) -> Bool {
        let answer = call.answer.flatMap { $0.isFailure ? nil : $0 }
        order.append(index)
        switch (call.operation, phase) {
        case (.start, .free):
            guard answer == nil || answer == .started else { return false }
            generations.append(Generation(start: index, duration: call.duration, observers: [index]))
            phase = .running
            current = index
        case (.start, _), (.attach, .running), (.attach, .paused):
            guard answer == nil || fitsAttached(answer!) else { return false }
            if let current { endedBy[current] = index }
            current = index
            generations[generations.count - 1].observers.append(index)
        case (.attach, .free):
            guard answer == nil || answer == .nothing else { return false }
        case (.cancel, .free), (.pause, .free), (.pause, .paused), (.resume, .free), (.resume, .running):
            guard answer == nil || answer == .no else { return false }
        case (.cancel, _):
            guard answer == nil || answer == .yes else { return false }
            if let current { endedBy[current] = index }
            generations[generations.count - 1].cancelledBy = index
            current = nil
            phase = .free
        case (.pause, .running):
            guard answer == nil || answer == .yes else { return false }
            generations[generations.count - 1].pauses.append((index, nil))
            phase = .paused
        case (.resume, .paused):
            guard answer == nil || answer == .yes else { return false }
            let last = generations[generations.count - 1].pauses.count - 1
            generations[generations.count - 1].pauses[last].resume = index
            phase = .running
        }
        return true
    }

    /// An attach's remaining time: never more than the countdown's duration. Zero fits: a
    /// countdown past its deadline that is not finished yet (a fleet's claim has not taken it),
    /// or paused there, is attached with nothing left.
    private func fitsAttached(_ answer: FleetHistory.Call.Answer) -> Bool {
        guard case .attached(let remaining) = answer, let duration = generations.last?.duration else { return false }
        return remaining >= 0 && remaining <= duration + Int64(ClockAllowance.fleet)
    }

    /// Where call `index` stands in the order (nil: not applied).
    func position(of index: Int) -> Int? { order.firstIndex(of: index) }
}
