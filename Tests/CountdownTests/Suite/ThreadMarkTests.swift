@testable import CountdownConformance
import CountdownSupport
import Dispatch
import Foundation
import Testing

/// How `shutdown` and `release` tell a scheduler's own threads from the rest of the process'.
@Suite struct ThreadMarkTests {
    /// CI of 6707235: `dispatch-source` failed `shutdown` with "threads the scheduler started
    /// still run 5 s after shutdown and release: countdown-tick", a thread that backend never
    /// starts: another test's timestamp scheduler, made in the same window. A thread started
    /// elsewhere while the window is open is not the scheduler's; one the window's thread starts,
    /// and one that thread starts in turn, are.
    @Test func onlyThreadsStartedFromTheWindowAreOwn() throws {
        guard OSThreads.current() != nil else { return }  // no /proc: nothing is judged
        let elsewhereGo = DispatchSemaphore(value: 0)
        let elsewhereStarted = DispatchSemaphore(value: 0)
        let release = Locked(false)
        let parked = Locked(0)
        @Sendable func park(_ name: String) {
            nameCurrentThread(name)
            parked.withLock { $0 += 1 }
            _ = realTimeWait(timeout: .seconds(10)) { release.withLock { $0 } }
        }
        // Made before the window: it starts its thread from outside, while the window is open.
        Thread {
            elsewhereGo.wait()
            Thread { park("tm-elsewhere") }.start()
            elsewhereStarted.signal()
        }.start()
        defer { release.withLock { $0 = true } }

        let (_, own) = OSThreads.watching {
            Thread {
                Thread { park("tm-grandchild") }.start()
                park("tm-child")
            }.start()
            elsewhereGo.signal()
            elsewhereStarted.wait()
            _ = realTimeWait(timeout: .seconds(5)) { parked.withLock { $0 == 3 } }
        }
        var named: [String: Int] = [:]
        for (id, name) in OSThreads.current() ?? [:] where name.hasPrefix("tm-") { named[name] = id }
        try #require(named.count == 3, "the threads did not all start: \(named.keys.sorted())")
        #expect(own.contains(named["tm-child"]!))
        #expect(own.contains(named["tm-grandchild"]!))
        #expect(!own.contains(named["tm-elsewhere"]!), "a thread started outside the window counted as the scheduler's")
        // The window takes its mark off the calling thread: what it starts afterwards is not own.
        Thread { park("tm-after") }.start()
        _ = realTimeWait(timeout: .seconds(5)) { parked.withLock { $0 == 4 } }
        let after = try #require(OSThreads.current()?.first { $0.value == "tm-after" }?.key)
        #expect(ThreadMark.read(after) == .unmarked, "the window left its mark on the calling thread")
    }
}
