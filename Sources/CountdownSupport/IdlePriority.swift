#if os(Linux)
import Glibc
#endif

/// Lets the calling thread run only on a core nothing else wants: Linux's `SCHED_IDLE`, which
/// any other thread preempts at once. For work that may wait (memory faulted in ahead of need),
/// so that it never delays a tick. Elsewhere it does nothing: give the `Thread` a background
/// quality of service before it starts instead.
///
/// For a thread of one's own only: an unprivileged thread cannot take its priority back, so a
/// thread of a pool must never be lowered.
package func lowerCurrentThreadToIdlePriority() {
    #if os(Linux)
    var parameters = sched_param()
    let idle: Int32 = 5  // SCHED_IDLE: not in Swift's Glibc module (a GNU extension)
    // 0: the calling thread (Linux schedules threads, not processes).
    _ = sched_setscheduler(0, idle, &parameters)
    #endif
}
