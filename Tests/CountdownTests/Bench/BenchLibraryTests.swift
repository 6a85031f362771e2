import Countdown
import Testing

// Not @testable: what a second package sees of the benchmark library.
import CountdownBenchKit

/// A package with a backend of its own runs the benchmark's commands on it, through the
/// library's public API alone.
@Suite("Benchmark library")
struct BenchLibraryTests {
    @Test("a backend added by another package is run by name: the conformance suite judges it")
    func addedBackendIsJudged() throws {
        let mine = CountdownBackend(name: "added-virtual") { (options: CountdownBackend.Options) throws(CountdownError) in
            try VirtualScheduler(tickInterval: options.tickInterval, deliveryQueue: options.deliveryQueue)
        }
        #expect(mine.description == "added-virtual")
        // The virtual scheduler's contract checks run in virtual time, in well under a second;
        // exit 0: every check passed or was not applicable.
        let status = BenchCommand.run(
            arguments: ["conformance", "--backend", "added-virtual", "--check", "start,cancel", "--no-progress",
                        "--format", "json"],
            adding: [mine])
        #expect(status == 0)
        #expect(BenchCommand.run(arguments: ["conformance", "--backend", "not-added"]) == 2, "an unknown name is bad arguments")
    }
}
