import Countdown

/// What a check watches without keeping it alive.
final class Token: Sendable {}

/// `@unchecked Sendable`: set once before it is shared; Swift's weak loads are thread-safe.
final class Watched: @unchecked Sendable {
    weak var token: Token?
    init(_ token: Token) { self.token = token }
    var isAlive: Bool { token != nil }
}

/// `@unchecked Sendable`: set once before it is shared; Swift's weak loads are thread-safe.
final class WeakScheduler: @unchecked Sendable {
    weak var scheduler: (any CountdownScheduler)?
    init(_ scheduler: any CountdownScheduler) { self.scheduler = scheduler }
    var isAlive: Bool { scheduler != nil }
}
