#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs `body` with SIGPIPE blocked on the calling thread, and takes back a SIGPIPE that `body`
/// raised: a write to a peer that has gone (a Redis connection reset by the server, a child
/// process that exited) fails with `EPIPE` instead of killing the process, whatever the
/// process's own handling of SIGPIPE is. What libpq does around its sends; for code that
/// cannot pass `MSG_NOSIGNAL` (hiredis writes with `write`).
package func withoutSIGPIPE<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
    var pipe = sigset_t()
    sigemptyset(&pipe)
    sigaddset(&pipe, SIGPIPE)
    var previous = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipe, &previous)
    var pending = sigset_t()
    sigpending(&pending)
    let alreadyPending = sigismember(&pending, SIGPIPE) == 1
    defer {
        if !alreadyPending {
            sigpending(&pending)
            if sigismember(&pending, SIGPIPE) == 1 {
                #if canImport(Glibc)
                var none = timespec()
                _ = sigtimedwait(&pipe, nil, &none)
                #else
                var taken: Int32 = 0
                _ = sigwait(&pipe, &taken)
                #endif
            }
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
    }
    return try body()
}
