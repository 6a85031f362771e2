#if os(Linux)
import Glibc
#endif

/// Names the calling thread (15 characters at most on Linux).
///
/// Not `Thread.current.name`: corelibs applies that only once the `Thread` object holds its
/// pthread handle, which `start()` stores after `pthread_create` returns, so a new thread that
/// names itself at once is often left with its creator's name (seen on Linux under load).
package func nameCurrentThread(_ name: String) {
    #if os(Linux)
    // Swift's Glibc module does not export pthread_setname_np (a GNU extension): look it up.
    typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
    guard let symbol = dlsym(nil, "pthread_setname_np") else { return }
    _ = unsafeBitCast(symbol, to: SetName.self)(pthread_self(), String(name.prefix(15)))
    #endif
}
