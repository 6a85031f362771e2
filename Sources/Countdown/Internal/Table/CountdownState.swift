/// What a place of the table holds, as the contract names it: nothing, a running countdown, or
/// a paused one.
enum CountdownState: UInt8, Sendable {
    case vacant
    case running
    case paused

    var isOccupied: Bool { self != .vacant }
    var isPaused: Bool { self == .paused }
}

/// A countdown's timer, as the table knows it: none (a shared due-queue keeps none; a paused
/// countdown's was disarmed), one decided whose handle the mechanism has not handed back yet
/// (its arm: a handle for another arm lost a race and is disarmed), or the handle kept.
enum TimerState<Handle> {
    case none
    case pending(arm: UInt32)
    case kept(Handle)

    var handle: Handle? {
        if case .kept(let handle) = self { return handle }
        return nil
    }

    var isNone: Bool {
        if case .none = self { return true }
        return false
    }

    func isPending(arm: UInt32) -> Bool {
        if case .pending(let pending) = self { return pending == arm }
        return false
    }

    /// Forgets the timer and returns its handle, if one was kept.
    mutating func release() -> Handle? {
        defer { self = .none }
        return handle
    }
}

extension TimerState: Sendable where Handle: Sendable {}
