#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Tells the threads a scheduler starts while it is made from the threads anything else in the
/// process starts at the same time. A thread inherits its creator's signal mask, so the making
/// thread changes its own while it makes the scheduler: one real-time signal blocked and another
/// unblocked. The threads it starts, and the threads those start, carry that pair in their mask
/// (/proc's `SigBlk`) for life; a thread another test starts in the same window does not: one
/// started from the main thread has neither blocked, one from a pool thread (libdispatch and the
/// cooperative pool block every signal on their workers) both.
///
/// Why not "appeared while the scheduler was made": Swift Testing runs other tests in the same
/// process at once, and a test that makes a timestamp scheduler outside the suite starts a
/// `countdown-tick` thread that lives on. CI saw one taken for `dispatch-source`'s own, "still
/// run 5 s after shutdown and release: countdown-tick".
enum ThreadMark {
    /// SIGRTMAX − 7 blocked and SIGRTMAX − 6 not: glibc keeps the first real-time signals for
    /// itself; nothing in the toolchain's runtimes sends these. A blocked or unblocked signal
    /// changes nothing for a thread that never receives it.
    static var blocked: Int32 { realTimeSignal(fromTop: 7) }
    static var unblocked: Int32 { realTimeSignal(fromTop: 6) }

    private static func realTimeSignal(fromTop offset: Int32) -> Int32 {
        #if canImport(Glibc)
        __libc_current_sigrtmax() - offset
        #else
        SIGUSR2 - offset + 6  // Apple platforms: no /proc to read the mark, so it is never judged.
        #endif
    }

    /// Runs `body` with the mark on the calling thread, then puts its mask back as it was.
    static func marking<T>(_ body: () throws -> T) rethrows -> T {
        var previous = sigset_t()
        pthread_sigmask(SIG_SETMASK, nil, &previous)
        var mark = previous
        sigaddset(&mark, blocked)
        sigdelset(&mark, unblocked)
        pthread_sigmask(SIG_SETMASK, &mark, nil)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return try body()
    }

    /// What a thread's mask says of it.
    enum Reading: Equatable {
        case marked
        case unmarked
        /// Every signal blocked: Foundation's `Thread.start` blocks them all while it creates
        /// the thread, which puts its creator's mask back moments later. Read again.
        case starting
        /// Gone, or no /proc.
        case unreadable
    }

    /// Thread `id` of this process, read from /proc.
    static func read(_ id: Int) -> Reading {
        guard let status = try? String(contentsOfFile: "/proc/self/task/\(id)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("SigBlk:") }),
              let mask = UInt64(line.dropFirst("SigBlk:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return .unreadable }
        func bit(_ signal: Int32) -> UInt64 { 1 << UInt64(signal - 1) }
        // SIGKILL and SIGSTOP cannot be blocked; glibc keeps its two first real-time signals.
        let unblockable = bit(SIGKILL) | bit(SIGSTOP) | bit(32) | bit(33)
        if mask | unblockable == .max { return .starting }
        return mask & bit(blocked) != 0 && mask & bit(unblocked) == 0 ? .marked : .unmarked
    }
}
