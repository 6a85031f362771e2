import Foundation

/// The clock the timestamp backend reads to compute remaining = deadline − now.
///
/// ``wall`` reads `Date` (`CLOCK_REALTIME`), as the articles did: a user who changes the
/// system clock moves the countdown. ``continuous`` reads `ContinuousClock`
/// (`CLOCK_BOOTTIME` on Linux), which no one can set. A custom clock lets tests and the
/// benchmark inject a wall clock that jumps.
public struct CountdownClock: Sendable {
    /// Shown in profiles and on the command line: `wall`, `continuous`.
    public let name: String
    /// Whether a change of the system clock moves this clock's readings.
    public let followsWallClock: Bool
    private let read: @Sendable () -> Duration

    /// - Parameters:
    ///   - read: the time since the clock's own epoch; it must not go backwards except
    ///     when `followsWallClock` is true (someone set the clock).
    public init(name: String, followsWallClock: Bool, read: @escaping @Sendable () -> Duration) {
        self.name = name
        self.followsWallClock = followsWallClock
        self.read = read
    }

    /// The time since this clock's epoch.
    public func now() -> Duration { read() }

    /// `Date()`: the system's wall clock.
    public static let wall = CountdownClock(name: "wall", followsWallClock: true) {
        .seconds(Date().timeIntervalSince1970)
    }

    /// `ContinuousClock`: monotonic, and it keeps counting while the machine sleeps.
    public static let continuous = CountdownClock(name: "continuous", followsWallClock: false) {
        continuousOrigin.duration(to: .now)
    }

    private static let continuousOrigin = ContinuousClock.now
}
