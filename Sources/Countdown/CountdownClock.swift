import CountdownSupport
import Foundation

/// The clock the timestamp backend reads to compute remaining = deadline − now.
///
/// ``wall`` reads the system's wall clock (`CLOCK_REALTIME`, what `Date` reads), as the
/// articles did: a user who changes the system clock moves the countdown. ``continuous``
/// reads the clock `ContinuousClock` reads (`CLOCK_BOOTTIME` on Linux), which no one can set.
/// A custom clock lets tests and the benchmark inject a wall clock that jumps.
public struct CountdownClock: Sendable {
    private enum Source: Sendable {
        case wall
        case continuous
        case custom(@Sendable () -> Duration)
    }

    /// Shown in profiles and on the command line: `wall`, `continuous`.
    public let name: String
    /// Whether a change of the system clock moves this clock's readings.
    public let followsWallClock: Bool
    private let source: Source

    /// - Parameters:
    ///   - name: how reports name it (`wall`, `continuous`, `test`).
    ///   - followsWallClock: whether someone setting the clock moves it, as the wall clock: it
    ///     is what a profile's wall-clock answer is judged by.
    ///   - read: the time since the clock's own epoch; it must not go backwards except
    ///     when `followsWallClock` is true (someone set the clock).
    public init(name: String, followsWallClock: Bool, read: @escaping @Sendable () -> Duration) {
        self.init(name: name, followsWallClock: followsWallClock, source: .custom(read))
    }

    private init(name: String, followsWallClock: Bool, source: Source) {
        self.name = name
        self.followsWallClock = followsWallClock
        self.source = source
    }

    /// The time since this clock's epoch.
    public func now() -> Duration { .nanoseconds(nanosecondsNow()) }

    /// The time since this clock's epoch in nanoseconds: the built-in clocks are read straight
    /// from the system, once per wake-up of a timestamp scheduler.
    func nanosecondsNow() -> Int64 {
        switch source {
        case .wall: SystemClocks.wall()
        case .continuous: SystemClocks.continuous()
        case .custom(let read): read().nanoseconds
        }
    }

    /// The system's wall clock, as `Date()` reads it.
    public static let wall = CountdownClock(name: "wall", followsWallClock: true, source: .wall)

    /// `ContinuousClock`'s clock: monotonic, and it keeps counting while the machine sleeps.
    public static let continuous = CountdownClock(name: "continuous", followsWallClock: false, source: .continuous)
}
